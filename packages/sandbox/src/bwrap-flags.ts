/**
 * The bubblewrap flags every sandboxed call starts with, and the host probe
 * tests: new user, pid, ipc, uts, network (and, where possible, cgroup)
 * namespaces; uid and gid 65534 inside; no further user namespaces; every
 * capability dropped (as root too); killed with its parent; a new session (no
 * terminal injection); an empty environment; a minimal `/dev`, read-only so
 * that nothing can be written there and run (its device nodes stay usable).
 */
export const BWRAP_ISOLATION_FLAGS: readonly string[] = [
  '--unshare-user',
  '--unshare-pid',
  '--unshare-ipc',
  '--unshare-uts',
  '--unshare-net',
  '--unshare-cgroup-try',
  '--uid',
  '65534',
  '--gid',
  '65534',
  '--hostname',
  'metnos',
  '--disable-userns',
  '--cap-drop',
  'ALL',
  '--die-with-parent',
  '--new-session',
  '--clearenv',
  '--dev',
  '/dev',
  '--remount-ro',
  '/dev',
];
