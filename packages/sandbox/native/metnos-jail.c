/*
 * metnos-jail: restricts itself, then execs the executor process.
 *
 * Runs inside the bubblewrap sandbox (tiers standard and full) or directly
 * (tier basic). In order:
 *   1. host side, before bwrap: joins the cgroups named with --cgroup and opens
 *      each --pin FD:PATH as an O_PATH descriptor on FD, after checking that
 *      the open file really is PATH (no symlink swapped in since the policy
 *      check), for bwrap's --bind-fd / --ro-bind-fd. With --noexec-pin FD:PATH
 *      (the profile's folders) it first enters a mount namespace of its own,
 *      binds each such PATH onto itself with noexec, nosuid and nodev added,
 *      and re-binds any runtime pin below one of them from the original
 *      mount, so bwrap, started in that namespace, binds written files that
 *      nothing can execute or map executable, and a runtime that still runs,
 *   2. sets resource limits (--rlimit NAME=VALUE),
 *   3. opens the forwarder socket (--forward PORT:UNIX_SOCKET) and forks the
 *      relay that carries TCP connections on 127.0.0.1:PORT inside the empty
 *      network namespace to the host proxy's unix socket,
 *   4. applies a Landlock ruleset (--landlock with --ro/--rx/--rw/--dev paths
 *      and --tcp-connect ports),
 *   5. sets no_new_privs and loads the seccomp filter (--seccomp): a deny
 *      list of system calls, and an allow-list of socket address families,
 *   6. execs the command after "--".
 * With --probe it prints what the kernel supports and exits.
 *
 * Built from source by @metnos/sandbox (gcc, libseccomp linked statically).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

/* Landlock UAPI, declared here so older kernel headers still build. */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)
#define LL_FS_TRUNCATE (1ULL << 14)
#define LL_FS_IOCTL_DEV (1ULL << 15)
#define LL_NET_BIND_TCP (1ULL << 0)
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

/* mount_setattr (Linux 5.12), declared here so older headers still build. */
#define MNT_ATTR_NOSUID 0x00000002ULL
#define MNT_ATTR_NODEV 0x00000004ULL
#define MNT_ATTR_NOEXEC 0x00000008ULL
#define MNT_AT_RECURSIVE 0x8000
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef ST_NOSYMFOLLOW
#define ST_NOSYMFOLLOW 0x2000
#endif
#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256
#endif

struct mnt_attr {
  uint64_t attr_set;
  uint64_t attr_clr;
  uint64_t propagation;
  uint64_t userns_fd;
};

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

struct ll_net_port_attr {
  uint64_t allowed_access;
  uint64_t port;
};

#define MAX_ITEMS 256

enum access_kind { ACCESS_RO, ACCESS_RX, ACCESS_RW, ACCESS_DEV };

struct path_rule {
  const char *path;
  enum access_kind kind;
};

static struct path_rule path_rules[MAX_ITEMS];
static int path_rule_count = 0;
static uint64_t tcp_ports[MAX_ITEMS];
static int tcp_port_count = 0;
static const char *cgroup_files[16];
static int cgroup_file_count = 0;
/* A bind source for bwrap: "FD:PATH"; noexec for the profile's folders. */
struct pin {
  const char *spec;
  int noexec;
};

static struct pin pins[MAX_ITEMS];
static int pin_count = 0;

static void die(const char *what) {
  dprintf(2, "metnos-jail: %s: %s\n", what, strerror(errno));
  _exit(125);
}

static void die_message(const char *message) {
  dprintf(2, "metnos-jail: %s\n", message);
  _exit(125);
}

static int landlock_abi(void) {
  long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : (int)abi;
}

static uint64_t fs_rights_for_abi(int abi) {
  uint64_t rights = LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_REMOVE_DIR |
                    LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK |
                    LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM;
  if (abi >= 2) rights |= LL_FS_REFER;
  if (abi >= 3) rights |= LL_FS_TRUNCATE;
  if (abi >= 5) rights |= LL_FS_IOCTL_DEV;
  return rights;
}

static uint64_t rights_for(enum access_kind kind, int is_dir, uint64_t handled) {
  const uint64_t file_only = LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV;
  uint64_t rights = 0;
  switch (kind) {
  case ACCESS_RO:
    rights = LL_FS_READ_FILE | LL_FS_READ_DIR;
    break;
  case ACCESS_RX:
    rights = LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_EXECUTE;
    break;
  case ACCESS_RW:
    /* No device, fifo or socket nodes, no execution of written files. */
    rights = LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE |
             LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SYM | LL_FS_REFER | LL_FS_TRUNCATE;
    break;
  case ACCESS_DEV:
    rights = LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_IOCTL_DEV;
    break;
  }
  if (!is_dir) rights &= file_only;
  return rights & handled;
}

static void apply_landlock(void) {
  int abi = landlock_abi();
  if (abi < 1) die_message("Landlock is not available on this kernel");
  struct ll_ruleset_attr attr = {0};
  size_t attr_size = sizeof(uint64_t);
  attr.handled_access_fs = fs_rights_for_abi(abi);
  if (abi >= 4) {
    attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
    attr_size = 2 * sizeof(uint64_t);
  }
  if (abi >= 6) {
    attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
    attr_size = sizeof(attr);
  }
  int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, attr_size, 0);
  if (ruleset < 0) die("landlock_create_ruleset");
  for (int i = 0; i < path_rule_count; i++) {
    int fd = open(path_rules[i].path, O_PATH | O_CLOEXEC);
    if (fd < 0) continue; /* absent from this view: nothing to allow */
    struct stat info;
    if (fstat(fd, &info) != 0) die("fstat");
    struct ll_path_beneath_attr rule = {
        .allowed_access = rights_for(path_rules[i].kind, S_ISDIR(info.st_mode), attr.handled_access_fs),
        .parent_fd = fd,
    };
    if (rule.allowed_access != 0 && syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0) != 0) {
      dprintf(2, "metnos-jail: landlock rule for %s: %s\n", path_rules[i].path, strerror(errno));
      _exit(125);
    }
    close(fd);
  }
  if (abi >= 4) {
    for (int i = 0; i < tcp_port_count; i++) {
      struct ll_net_port_attr rule = {.allowed_access = LL_NET_CONNECT_TCP, .port = tcp_ports[i]};
      if (syscall(__NR_landlock_add_rule, ruleset, LL_RULE_NET_PORT, &rule, 0) != 0) die("landlock net rule");
    }
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
  if (syscall(__NR_landlock_restrict_self, ruleset, 0) != 0) die("landlock_restrict_self");
  close(ruleset);
}

static void deny(scmp_filter_ctx filter, int syscall_number) {
  if (syscall_number < 0) return; /* not on this architecture */
  if (seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), syscall_number, 0) != 0) die_message("seccomp rule");
}

/* Address families are small numbers; every value from here up is refused with one rule. */
#define FAMILY_LIMIT 64

/*
 * An allow-list on the first argument (the address family) of socket() or
 * socketpair(): every family below FAMILY_LIMIT that is not in `allowed`, and
 * every larger value (high bits included), fails with EACCES.
 */
static void limit_families(scmp_filter_ctx filter, int syscall_number, const int *allowed, int allowed_count) {
  for (int family = 0; family < FAMILY_LIMIT; family++) {
    int listed = 0;
    for (int i = 0; i < allowed_count; i++) listed |= allowed[i] == family;
    if (!listed && seccomp_rule_add(filter, SCMP_ACT_ERRNO(EACCES), syscall_number, 1,
                                    SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)family)) != 0)
      die_message("seccomp family rule");
  }
  if (seccomp_rule_add(filter, SCMP_ACT_ERRNO(EACCES), syscall_number, 1, SCMP_A0(SCMP_CMP_GE, FAMILY_LIMIT)) != 0)
    die_message("seccomp family rule");
}

static void apply_seccomp(int allow_unix) {
  scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
  if (filter == NULL) die_message("seccomp_init failed");
  const char *denied[] = {
      "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2", "pivot_root", "chroot", "move_mount",
      "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "bpf", "keyctl", "add_key",
      "request_key", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register", "unshare", "setns",
      "perf_event_open", "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
      "open_by_handle_at", "name_to_handle_at", "swapon", "swapoff", "reboot", "syslog", "acct", "quotactl",
      "lookup_dcookie", "iopl", "ioperm", "vhangup", "personality", "uselib", "fanotify_init", "pidfd_getfd",
      "kcmp", "landlock_create_ruleset", "settimeofday", "clock_settime", "adjtimex", "clock_adjtime",
      /* no anonymous file to execute: a memfd, a secret memfd, or exec by descriptor */
      "memfd_create", "memfd_secret", "execveat",
  };
  for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) deny(filter, seccomp_syscall_resolve_name(denied[i]));
  const uint64_t namespace_flags = CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
                                   CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_NEWTIME;
  for (int bit = 0; bit < 64; bit++) {
    uint64_t flag = 1ULL << bit;
    if ((namespace_flags & flag) == 0) continue;
    if (seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)) != 0)
      die_message("seccomp clone rule");
  }
  /* clone3 passes its flags in memory the filter cannot read: make libc fall back to clone. */
  if (seccomp_rule_add(filter, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) != 0) die_message("seccomp clone3 rule");
  /* fallocate reserves disk space without writing a byte, past the host's write meter; with
     EOPNOTSUPP, libc's posix_fallocate falls back to writing zeros, which the meter counts. */
  if (seccomp_rule_add(filter, SCMP_ACT_ERRNO(EOPNOTSUPP), SCMP_SYS(fallocate), 0) != 0)
    die_message("seccomp fallocate rule");
  /* loopback TCP to the relay; unix sockets only for the relay itself; socketpair(AF_UNIX) for child stdio */
  const int socket_families[] = {AF_INET, AF_INET6, AF_UNIX};
  limit_families(filter, SCMP_SYS(socket), socket_families, allow_unix ? 3 : 2);
  const int pair_families[] = {AF_UNIX};
  limit_families(filter, SCMP_SYS(socketpair), pair_families, 1);
  seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffff, TIOCSTI));
  seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffff, TIOCLINUX));
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
  if (seccomp_load(filter) != 0) die_message("seccomp_load failed");
  seccomp_release(filter);
}

static void relay(int tcp, const char *socket_path) {
  int upstream = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (upstream < 0) _exit(1);
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  strncpy(address.sun_path, socket_path, sizeof(address.sun_path) - 1);
  if (connect(upstream, (struct sockaddr *)&address, sizeof(address)) != 0) _exit(1);
  struct pollfd fds[2] = {{.fd = tcp, .events = POLLIN}, {.fd = upstream, .events = POLLIN}};
  char buffer[65536];
  int open_sides = 2;
  while (open_sides > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; i++) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      ssize_t count = read(fds[i].fd, buffer, sizeof(buffer));
      int other = i == 0 ? upstream : tcp;
      if (count <= 0) {
        shutdown(other, SHUT_WR);
        fds[i].fd = -1;
        open_sides--;
        continue;
      }
      for (ssize_t written = 0; written < count;) {
        ssize_t step = write(other, buffer + written, (size_t)(count - written));
        if (step <= 0) _exit(0);
        written += step;
      }
    }
  }
  _exit(0);
}

/* Listens on 127.0.0.1:port in this network namespace; each connection is relayed to the host proxy. */
static void start_forwarder(const char *spec) {
  const char *colon = strchr(spec, ':');
  if (colon == NULL) die_message("--forward expects PORT:SOCKET");
  int port = atoi(spec);
  const char *socket_path = colon + 1;
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) die("forwarder socket");
  int yes = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listener, (struct sockaddr *)&address, sizeof(address)) != 0) die("forwarder bind");
  if (listen(listener, 64) != 0) die("forwarder listen");
  pid_t pid = fork();
  if (pid < 0) die("fork");
  if (pid > 0) {
    close(listener);
    return;
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  signal(SIGCHLD, SIG_IGN);
  apply_seccomp(1);
  for (;;) {
    int connection = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
    if (connection < 0) {
      if (errno == EINTR) continue;
      _exit(1);
    }
    pid_t worker = fork();
    if (worker == 0) {
      close(listener);
      relay(connection, socket_path);
    }
    close(connection);
  }
}

static void set_limit(const char *spec) {
  const char *equals = strchr(spec, '=');
  if (equals == NULL) die_message("--rlimit expects NAME=VALUE");
  size_t length = (size_t)(equals - spec);
  unsigned long long value = strtoull(equals + 1, NULL, 10);
  int resource;
  if (strncmp(spec, "cpu", length) == 0) resource = RLIMIT_CPU;
  else if (strncmp(spec, "fsize", length) == 0) resource = RLIMIT_FSIZE;
  else if (strncmp(spec, "nofile", length) == 0) resource = RLIMIT_NOFILE;
  else if (strncmp(spec, "nproc", length) == 0) resource = RLIMIT_NPROC;
  else if (strncmp(spec, "data", length) == 0) resource = RLIMIT_DATA;
  else if (strncmp(spec, "core", length) == 0) resource = RLIMIT_CORE;
  else die_message("unknown rlimit");
  struct rlimit limit = {.rlim_cur = value, .rlim_max = value};
  if (resource == RLIMIT_CPU) limit.rlim_max = value + 1; /* SIGXCPU first, SIGKILL one second later */
  if (setrlimit(resource, &limit) != 0) die("setrlimit");
}

static const char *pin_path_of(const char *spec, long *target) {
  char *end = NULL;
  *target = strtol(spec, &end, 10);
  if (end == NULL || *end != ':' || *target < 3 || *target > 4096) die_message("--pin expects FD:PATH");
  return end + 1;
}

/* Opens PATH as O_PATH and refuses the call (exit 126) unless the open file is PATH itself. */
static int open_exact(const char *path) {
  int fd = open(path, O_PATH);
  if (fd < 0) {
    dprintf(2, "metnos-jail: cannot open %s: %s\n", path, strerror(errno));
    _exit(125);
  }
  char link[64];
  char actual[4096];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  ssize_t length = readlink(link, actual, sizeof(actual) - 1);
  if (length < 0) die("readlink");
  actual[length] = '\0';
  if (strcmp(actual, path) != 0) {
    dprintf(2, "metnos-jail: %s changed after the policy check (it now leads to %s)\n", path, actual);
    _exit(126);
  }
  return fd;
}

/* Opens the pin's PATH on its descriptor FD, for bwrap. */
static void pin_path(const struct pin *pin) {
  long target;
  const char *path = pin_path_of(pin->spec, &target);
  int fd = open_exact(path);
  if (fd != target) {
    if (dup2(fd, (int)target) < 0) die("dup2");
    close(fd);
  }
}

static void write_text(const char *file, const char *text) {
  int fd = open(file, O_WRONLY | O_CLOEXEC);
  if (fd < 0) die(file);
  ssize_t length = (ssize_t)strlen(text);
  if (write(fd, text, (size_t)length) != length) die(file);
  close(fd);
}

/*
 * A mount namespace of this process alone, so the noexec binds below never
 * reach the host. A non-root user gets it inside a user namespace that maps
 * only its own uid and gid; exec then drops the capabilities that came with
 * it, so bwrap still runs unprivileged.
 */
static void enter_private_mounts(void) {
  if (geteuid() == 0) {
    if (unshare(CLONE_NEWNS) != 0) die("unshare(CLONE_NEWNS)");
  } else {
    uid_t uid = geteuid();
    gid_t gid = getegid();
    char map[64];
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) die("unshare(CLONE_NEWUSER | CLONE_NEWNS)");
    write_text("/proc/self/setgroups", "deny");
    snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    write_text("/proc/self/uid_map", map);
    snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    write_text("/proc/self/gid_map", map);
  }
  if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0) die("make / a slave mount");
}

static int mount_setattr_works(void) {
  return syscall(__NR_mount_setattr, -1, "", 0, NULL, 0) != 0 && errno != ENOSYS;
}

/*
 * Binds PATH onto itself and marks the new mount, and every mount below it,
 * noexec, nosuid and nodev; every other flag stays (a read-only source stays
 * read-only). Works on descriptors, so a path swapped meanwhile cannot
 * redirect it. Before Linux 5.12 (no mount_setattr) the bind is not
 * recursive: mounts below PATH are left out of the view instead.
 */
static void bind_noexec(const char *path) {
  int recursive = mount_setattr_works();
  int fd = open_exact(path);
  char self[64];
  snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
  if (mount(self, self, NULL, MS_BIND | (recursive ? MS_REC : 0), NULL) != 0) {
    dprintf(2, "metnos-jail: cannot bind %s noexec: %s\n", path, strerror(errno));
    _exit(125);
  }
  close(fd);
  fd = open_exact(path); /* now the new bind */
  snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
  if (recursive) {
    struct mnt_attr attr = {.attr_set = MNT_ATTR_NOEXEC | MNT_ATTR_NOSUID | MNT_ATTR_NODEV};
    if (syscall(__NR_mount_setattr, fd, "", AT_EMPTY_PATH | MNT_AT_RECURSIVE, &attr, sizeof(attr)) != 0)
      die("mount_setattr noexec");
  } else {
    struct statvfs info;
    if (fstatvfs(fd, &info) != 0) die("fstatvfs");
    unsigned long flags = MS_BIND | MS_REMOUNT | MS_NOEXEC | MS_NOSUID | MS_NODEV;
    if (info.f_flag & ST_RDONLY) flags |= MS_RDONLY;
    if (info.f_flag & ST_NOSYMFOLLOW) flags |= MS_NOSYMFOLLOW;
    if (mount(NULL, self, NULL, flags, NULL) != 0) die("remount noexec");
  }
  close(fd);
}

static int is_within(const char *path, const char *root) {
  size_t length = strlen(root);
  if (length == 1 && root[0] == '/') return 1;
  return strncmp(path, root, length) == 0 && (path[length] == '\0' || path[length] == '/');
}

/*
 * Pins every bind source. Runtime pins (node, its libraries, the helper,
 * allow-listed binaries) are opened before any noexec bind, and one that lies
 * below a profile folder is bound back from that descriptor, so it stays
 * executable; profile folders are pinned only once they are noexec.
 */
static void pin_all(void) {
  int noexec_count = 0;
  for (int i = 0; i < pin_count; i++) noexec_count += pins[i].noexec;
  if (noexec_count > 0) enter_private_mounts();
  for (int i = 0; i < pin_count; i++)
    if (!pins[i].noexec) pin_path(&pins[i]);
  for (int i = 0; i < pin_count; i++) {
    long target;
    if (pins[i].noexec) bind_noexec(pin_path_of(pins[i].spec, &target));
  }
  for (int i = 0; i < pin_count; i++) {
    if (pins[i].noexec) continue;
    long runtime_fd;
    const char *path = pin_path_of(pins[i].spec, &runtime_fd);
    for (int j = 0; j < pin_count; j++) {
      long ignored;
      if (!pins[j].noexec || !is_within(path, pin_path_of(pins[j].spec, &ignored))) continue;
      char source[64];
      char target[64];
      int fd = open_exact(path);
      snprintf(source, sizeof(source), "/proc/self/fd/%ld", runtime_fd);
      snprintf(target, sizeof(target), "/proc/self/fd/%d", fd);
      if (mount(source, target, NULL, MS_BIND | MS_REC, NULL) != 0) die("bind a runtime file back");
      close(fd);
      break;
    }
  }
  for (int i = 0; i < pin_count; i++)
    if (pins[i].noexec) pin_path(&pins[i]);
}

/* ---- write quota: the outer helper stays as the sandbox's parent and meters what it writes ---- */

static unsigned long long write_quota = 0;
static int quota_final = 0;
/* --write-quota-idle: a warm process of the pool, waiting for its call. Nothing untrusted runs
   before the host hands it the call, and the host sends SIGUSR1 right before that, so until
   then the tree is metered every 250 ms instead of every 5 ms (a waiting process costs no CPU). */
static volatile sig_atomic_t call_started = 1;

static void on_call_started(int sig) {
  (void)sig;
  call_started = 1;
}

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif

/* Bytes a process (and the children it reaped) asked to write: the "wchar" line of /proc/PID/io. */
static unsigned long long wchar_of(const char *io_path) {
  char text[1024];
  int fd = open(io_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t length = read(fd, text, sizeof(text) - 1);
  close(fd);
  if (length <= 0) return 0;
  text[length] = '\0';
  const char *line = strstr(text, "wchar:");
  return line ? strtoull(line + 6, NULL, 10) : 0;
}

/* The live tree under root, its egress relay (running this very binary) left out: what the relay
   writes is what the executor downloads. */
static unsigned long long tree_wchar(pid_t root, dev_t self_dev, ino_t self_ino) {
  static pid_t stack[4096];
  int depth = 0;
  unsigned long long total = 0;
  stack[depth++] = root;
  while (depth > 0) {
    pid_t pid = stack[--depth];
    char path[64];
    struct stat exe;
    snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
    if (pid != root && stat(path, &exe) == 0 && exe.st_dev == self_dev && exe.st_ino == self_ino) continue;
    snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
    total += wchar_of(path);
    char task_dir[64];
    snprintf(task_dir, sizeof(task_dir), "/proc/%d/task", (int)pid);
    /* children of the main thread (Node's helpers threads do not fork) */
    char children_path[96];
    snprintf(children_path, sizeof(children_path), "%s/%d/children", task_dir, (int)pid);
    int fd = open(children_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char list[4096];
    ssize_t length = read(fd, list, sizeof(list) - 1);
    close(fd);
    if (length <= 0) continue;
    list[length] = '\0';
    for (char *cursor = list; *cursor != '\0';) {
      char *end = NULL;
      long child = strtol(cursor, &end, 10);
      if (end == cursor) break;
      if (child > 0 && depth < 4096) stack[depth++] = (pid_t)child;
      cursor = end;
    }
  }
  return total;
}

static void quota_exceeded(unsigned long long total) {
  dprintf(2, "metnos-jail: write quota exceeded: %llu bytes written, %llu allowed\n", total, write_quota);
  _exit(124);
}

/* Runs the command as a child and meters it every 5 ms; past the quota the child (bwrap, whose
   sandbox dies with it) is killed. At the end, with --write-quota-final, the exact total of the
   whole reaped tree is checked too. Exits as the child did. Never returns. */
static void supervise(char **command) {
  struct stat self;
  if (stat("/proc/self/exe", &self) != 0) die("stat /proc/self/exe");
  unsigned long long before = wchar_of("/proc/self/io");
  if (!call_started) {
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = on_call_started;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGUSR1, &action, NULL) != 0) die("sigaction");
  }
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    signal(SIGUSR1, SIG_DFL);
    execv(command[0], command);
    die("exec");
  }
  /* A pidfd wakes the wait the moment the child ends instead of at the next tick (5.3+). */
  int pidfd = (int)syscall(__NR_pidfd_open, child, 0);
  const struct timespec pause = {.tv_sec = 0, .tv_nsec = 5 * 1000 * 1000};
  for (;;) {
    int status = 0;
    pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) {
      /* every process of the tree has been reaped into this one's counters by now */
      unsigned long long total = wchar_of("/proc/self/io") - before;
      if (quota_final && total > write_quota) quota_exceeded(total);
      if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
      int sig = WTERMSIG(status);
      signal(sig, SIG_DFL);
      sigset_t set;
      sigemptyset(&set);
      sigaddset(&set, sig);
      sigprocmask(SIG_UNBLOCK, &set, NULL);
      kill(getpid(), sig);
      _exit(128 + sig);
    }
    if (done < 0 && errno != EINTR) die("waitpid");
    unsigned long long total = tree_wchar(child, self.st_dev, self.st_ino);
    if (total > write_quota) {
      kill(child, SIGKILL);
      waitpid(child, NULL, 0);
      quota_exceeded(total);
    }
    if (pidfd >= 0) {
      struct pollfd exited = {.fd = pidfd, .events = POLLIN};
      poll(&exited, 1, call_started ? 5 : 250);
    } else if (call_started) {
      nanosleep(&pause, NULL);
    } else {
      const struct timespec idle = {.tv_sec = 0, .tv_nsec = 250 * 1000 * 1000};
      nanosleep(&idle, NULL);
    }
  }
}

static void join_cgroup(const char *procs_file) {
  int fd = open(procs_file, O_WRONLY | O_CLOEXEC);
  if (fd < 0) die("open cgroup.procs");
  if (write(fd, "0", 1) != 1) die("join cgroup");
  close(fd);
}

static void probe(void) {
  int abi = landlock_abi();
  scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
  int seccomp_ok = 0;
  if (filter != NULL) {
    pid_t pid = fork();
    if (pid == 0) {
      if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(1);
      if (seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ptrace), 0) != 0) _exit(1);
      if (seccomp_load(filter) != 0) _exit(1);
      _exit(syscall(SYS_ptrace, 0, 0, 0, 0) == -1 && errno == EPERM ? 0 : 1);
    }
    int status = 0;
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) seccomp_ok = 1;
    seccomp_release(filter);
  }
  /* the noexec binds of profile folders need a mount namespace of the helper's own */
  int private_mounts = 0;
  pid_t mounts = fork();
  if (mounts == 0) {
    enter_private_mounts();
    _exit(0);
  }
  int status = 0;
  if (mounts > 0 && waitpid(mounts, &status, 0) == mounts && WIFEXITED(status) && WEXITSTATUS(status) == 0)
    private_mounts = 1;
  printf("{\"landlockAbi\":%d,\"seccomp\":%s,\"privateMounts\":%s}\n", abi, seccomp_ok ? "true" : "false",
         private_mounts ? "true" : "false");
}

int main(int argc, char **argv) {
  int use_landlock = 0, use_seccomp = 0, allow_unix = 0;
  const char *forward = NULL;
  int index = 1;
  for (; index < argc; index++) {
    const char *arg = argv[index];
    const char *value = index + 1 < argc ? argv[index + 1] : NULL;
    if (strcmp(arg, "--") == 0) {
      index++;
      break;
    } else if (strcmp(arg, "--probe") == 0) {
      probe();
      return 0;
    } else if (strcmp(arg, "--landlock") == 0) {
      use_landlock = 1;
    } else if (strcmp(arg, "--seccomp") == 0) {
      use_seccomp = 1;
    } else if (strcmp(arg, "--write-quota-final") == 0) {
      quota_final = 1;
    } else if (strcmp(arg, "--write-quota-idle") == 0) {
      call_started = 0;
    } else if (strcmp(arg, "--allow-unix") == 0) {
      allow_unix = 1;
    } else if (value == NULL) {
      die_message("missing value for an option");
    } else if (strcmp(arg, "--ro") == 0 || strcmp(arg, "--rx") == 0 || strcmp(arg, "--rw") == 0 ||
               strcmp(arg, "--dev") == 0) {
      if (path_rule_count == MAX_ITEMS) die_message("too many paths");
      enum access_kind kind = arg[2] == 'r' && arg[3] == 'o'   ? ACCESS_RO
                              : arg[2] == 'r' && arg[3] == 'x' ? ACCESS_RX
                              : arg[2] == 'r'                  ? ACCESS_RW
                                                               : ACCESS_DEV;
      path_rules[path_rule_count++] = (struct path_rule){.path = value, .kind = kind};
      index++;
    } else if (strcmp(arg, "--tcp-connect") == 0) {
      if (tcp_port_count == MAX_ITEMS) die_message("too many ports");
      tcp_ports[tcp_port_count++] = strtoull(value, NULL, 10);
      index++;
    } else if (strcmp(arg, "--rlimit") == 0) {
      set_limit(value);
      index++;
    } else if (strcmp(arg, "--cgroup") == 0) {
      if (cgroup_file_count == 16) die_message("too many cgroups");
      cgroup_files[cgroup_file_count++] = value;
      index++;
    } else if (strcmp(arg, "--pin") == 0 || strcmp(arg, "--noexec-pin") == 0) {
      if (pin_count == MAX_ITEMS) die_message("too many pins");
      pins[pin_count++] = (struct pin){.spec = value, .noexec = arg[2] == 'n'};
      index++;
    } else if (strcmp(arg, "--forward") == 0) {
      forward = value;
      index++;
    } else if (strcmp(arg, "--write-quota") == 0) {
      write_quota = strtoull(value, NULL, 10);
      if (write_quota == 0) die_message("--write-quota expects a positive byte count");
      index++;
    } else {
      dprintf(2, "metnos-jail: unknown option %s\n", arg);
      return 125;
    }
  }
  if (index >= argc) die_message("no command after --");
  for (int i = 0; i < cgroup_file_count; i++) join_cgroup(cgroup_files[i]);
  pin_all();
  if (write_quota > 0) supervise(&argv[index]);
  if (forward != NULL) start_forwarder(forward);
  if (use_landlock) apply_landlock();
  if (use_seccomp) apply_seccomp(allow_unix);
  /* Nothing but stdio crosses into the executor, whatever the parent left open (pins go to bwrap). */
  if (pin_count == 0) syscall(SYS_close_range, 3U, ~0U, 0U);
  execv(argv[index], &argv[index]);
  die("exec");
  return 125;
}
