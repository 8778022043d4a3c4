/* The code an attacker wants to run. If it ever runs, it writes the file named by
 * $METNOS_MARKER (inside a write-granted folder, so the host sees it) and says so on stdout. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void) {
  const char *marker = getenv("METNOS_MARKER");
  int fd = marker ? open(marker, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
  if (fd >= 0) {
    if (write(fd, "ran\n", 4) != 4) return 1;
    close(fd);
  }
  printf("PAYLOAD-RAN\n");
  return 0;
}
