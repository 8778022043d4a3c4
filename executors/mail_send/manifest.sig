{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "mail_send",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:63169fce2ea1db9c8be63359df12759c6f336b0d7116b90edac9978212b6840b",
    "code": "blake3:3e30f0c280ac1f6d0b505d3b06c3a8e9f66404b3b9ff4d4c7690a5b85adac56f",
    "schema": "blake3:c5c510703bfe11fa326130d29d7f8de132e4d7c14164081417a1cc835c057310",
    "profile_lock": "blake3:3b791a5aceb0a15fe3704d97276f170cac0cf4b97ff6a7e4bddf03b4882b3968"
  },
  "signature": "UDn/5vlZOFOmIjks2F7L+w3+GAAWJjRAOHPVR7jxLTAaY/yxYHR7nG9f8ehjCUi6uflqTzmFRAvEwUvHuTaqDw=="
}
