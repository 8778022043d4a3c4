{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "mail_send",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:63169fce2ea1db9c8be63359df12759c6f336b0d7116b90edac9978212b6840b",
    "code": "blake3:5b77ac4c4119ec9097a7f8dc3669cfa5b94ccf812ab75cab69cb33262c6a010d",
    "schema": "blake3:c5c510703bfe11fa326130d29d7f8de132e4d7c14164081417a1cc835c057310",
    "profile_lock": "blake3:3b791a5aceb0a15fe3704d97276f170cac0cf4b97ff6a7e4bddf03b4882b3968"
  },
  "signature": "AvHu+/CuQ07T/2WbqdNhw6k/FL0JQtw3dyFxHufhGMnA5jI/nvkV3VFG7RuC+Xk7KQgjhfg5AgK3p1yh250kAw=="
}
