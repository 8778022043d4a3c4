/* Tries the ways a sandboxed executor could run code it wrote, or open sockets it must not have,
 * and prints one JSON object: each key is an attempt, each value "ok" or the errno name it failed with.
 *   exec-probe sockets          address families for socket() and socketpair()
 *   exec-probe memfd SELF       memfd_create, memfd_secret, execveat (on SELF, an allow-listed binary)
 *   exec-probe mmap FILE        FILE mapped readable, then executable, then made executable with mprotect
 *   exec-probe flags PATH...    noexec, nosuid and nodev of the mounts holding each PATH (statvfs) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef SYS_memfd_secret
#define SYS_memfd_secret 447
#endif

static int first = 1;

static void report(const char *name, long result) {
  printf("%s\"%s\":\"%s\"", first ? "{" : ",", name, result >= 0 ? "ok" : strerrorname_np(errno));
  first = 0;
}

static void report_text(const char *name, const char *value) {
  printf("%s\"%s\":\"%s\"", first ? "{" : ",", name, value);
  first = 0;
}

static void sockets(void) {
  report("vsock", socket(AF_VSOCK, SOCK_STREAM, 0));
  report("packet", socket(AF_PACKET, SOCK_RAW, 0));
  report("alg", socket(AF_ALG, SOCK_SEQPACKET, 0));
  report("netlink", socket(AF_NETLINK, SOCK_RAW, 0));
  report("bluetooth", socket(AF_BLUETOOTH, SOCK_RAW, 1));
  report("key", socket(AF_KEY, SOCK_RAW, 2));
  report("unix", socket(AF_UNIX, SOCK_STREAM, 0));
  report("inet", socket(AF_INET, SOCK_STREAM, 0));
  report("inet6", socket(AF_INET6, SOCK_DGRAM, 0));
  /* the kernel reads an int: high bits must not smuggle AF_VSOCK past a filter */
  report("vsock_high_bits", syscall(SYS_socket, (1UL << 32) | AF_VSOCK, SOCK_STREAM, 0));
  report("family_200", socket(200, SOCK_STREAM, 0));
  int pair[2];
  report("pair_unix", socketpair(AF_UNIX, SOCK_STREAM, 0, pair));
  report("pair_vsock", socketpair(AF_VSOCK, SOCK_STREAM, 0, pair));
  report("pair_99", socketpair(99, SOCK_STREAM, 0, pair));
  report("pair_inet", socketpair(AF_INET, SOCK_STREAM, 0, pair));
}

static void memfd(const char *self) {
  report("memfd_create", syscall(SYS_memfd_create, "payload", 0));
  report("memfd_secret", syscall(SYS_memfd_secret, 0));
  int fd = open(self, O_RDONLY | O_CLOEXEC);
  report("open_self", fd);
  char *argv[] = {(char *)self, NULL};
  char *envp[] = {NULL};
  /* execveat returns only when it fails; "ok" would never be printed */
  report("execveat_fd", syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH));
  report("execveat_path", syscall(SYS_execveat, AT_FDCWD, self, argv, envp, 0));
}

static void map(const char *file) {
  int fd = open(file, O_RDONLY | O_CLOEXEC);
  report("open", fd);
  void *readable = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
  report("mmap_read", readable == MAP_FAILED ? -1 : 0);
  void *executable = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  report("mmap_exec", executable == MAP_FAILED ? -1 : 0);
  report("mprotect_exec", readable == MAP_FAILED ? -1 : mprotect(readable, 4096, PROT_READ | PROT_EXEC));
}

static void flags(int count, char **paths) {
  for (int i = 0; i < count; i++) {
    struct statvfs info;
    char value[64];
    if (statvfs(paths[i], &info) != 0) {
      snprintf(value, sizeof(value), "%s", strerrorname_np(errno));
    } else {
      snprintf(value, sizeof(value), "%s%s%s", info.f_flag & ST_NOEXEC ? "noexec," : "",
               info.f_flag & ST_NOSUID ? "nosuid," : "", info.f_flag & ST_NODEV ? "nodev," : "");
    }
    report_text(paths[i], value);
  }
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "sockets") == 0) sockets();
  else if (argc >= 3 && strcmp(argv[1], "memfd") == 0) memfd(argv[2]);
  else if (argc >= 3 && strcmp(argv[1], "mmap") == 0) map(argv[2]);
  else if (argc >= 3 && strcmp(argv[1], "flags") == 0) flags(argc - 2, argv + 2);
  else {
    fprintf(stderr, "usage: exec-probe sockets | memfd SELF | mmap FILE | flags PATH...\n");
    return 2;
  }
  printf("}\n");
  return 0;
}
