{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:bad29eb27998c9d7",
  "name": "shell_exec",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:61d15d625850f9f6d77a92029735fee771268bc069fd2ac1b8e93ae48a40093b",
    "code": "blake3:4835b87a068453674ef9402b7cd5c381911374d0002d92fd60f550b392b902bc",
    "schema": "blake3:dd9b7a7866f2b829e04f64bfb4c6e85783c1fea24c12f930496eeb3b128bcbed",
    "profile_lock": "blake3:184e63441d905dff7c04f6f43486767640d375c3cc234b01a485c5080f7ee470"
  },
  "signature": "9K97urv3IZyv1bLW/WJsRB2u9SiniqhRCHow386WXfF4qtnQajbNKcLhxw9YkENXuNcZOR+sBzOWC0cGgBUTAQ=="
}
