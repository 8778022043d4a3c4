{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:bad29eb27998c9d7",
  "name": "shell_exec",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:61d15d625850f9f6d77a92029735fee771268bc069fd2ac1b8e93ae48a40093b",
    "code": "blake3:02426af9af07715423312fd7071d21eb0bc7f1481825d276fd78989cf4be2f10",
    "schema": "blake3:dd9b7a7866f2b829e04f64bfb4c6e85783c1fea24c12f930496eeb3b128bcbed",
    "profile_lock": "blake3:184e63441d905dff7c04f6f43486767640d375c3cc234b01a485c5080f7ee470"
  },
  "signature": "9WWQG+8nfwyIJwivj8CmBdHq8wxECUM43xJWj/ktuH3TF7Wo1QpwPwa54gPuL9CR0oxfQX4AupBR9Gkx1dtwBg=="
}
