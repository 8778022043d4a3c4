/* Tries syscalls a sandboxed executor must not be able to use and prints one JSON object:
 * each key is a syscall, each value "ok" or the errno name it failed with. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int first = 1;
static void report(const char *name, long result) {
  printf("%s\"%s\":\"%s\"", first ? "{" : ",", name, result >= 0 ? "ok" : strerrorname_np(errno));
  first = 0;
}

static int child(void *arg) { (void)arg; return 0; }
static char stack[65536];

int main(void) {
  report("ptrace", ptrace(PTRACE_TRACEME, 0, 0, 0));
  report("unshare_user", unshare(CLONE_NEWUSER));
  report("unshare_net", unshare(CLONE_NEWNET));
  report("unshare_mount", unshare(CLONE_NEWNS));
  long pid = clone(child, stack + sizeof(stack), CLONE_NEWUSER | SIGCHLD, NULL);
  if (pid > 0) waitpid((pid_t)pid, NULL, 0);
  report("clone_newuser", pid);
  report("mount_proc", mount("proc", "/tmp", "proc", 0, NULL));
  report("remount_root_rw", mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL));
  report("bpf", syscall(SYS_bpf, 0, NULL, 0));
  report("keyctl", syscall(SYS_keyctl, 0, 0, 0, 0, 0));
  report("userfaultfd", syscall(SYS_userfaultfd, 0));
  report("io_uring_setup", syscall(SYS_io_uring_setup, 1, NULL));
  report("setns", syscall(SYS_setns, 0, 0));
  int unix_socket = socket(AF_UNIX, SOCK_STREAM, 0);
  report("socket_unix", unix_socket);
  report("chroot", chroot("/"));
  report("perf_event_open", syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
  printf("}\n");
  return 0;
}
