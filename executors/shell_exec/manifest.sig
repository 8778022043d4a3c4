{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "shell_exec",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:61d15d625850f9f6d77a92029735fee771268bc069fd2ac1b8e93ae48a40093b",
    "code": "blake3:02426af9af07715423312fd7071d21eb0bc7f1481825d276fd78989cf4be2f10",
    "schema": "blake3:dd9b7a7866f2b829e04f64bfb4c6e85783c1fea24c12f930496eeb3b128bcbed",
    "profile_lock": "blake3:184e63441d905dff7c04f6f43486767640d375c3cc234b01a485c5080f7ee470"
  },
  "signature": "l426W3sZKaCsAXVqOAmVgHEUj2ZXIAon9UTaR3gGRPXIWonD4eqgyj2dfL+JdghNI9Lgwz0g5u+vUYkmQX51AQ=="
}
