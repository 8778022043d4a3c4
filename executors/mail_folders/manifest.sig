{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "mail_folders",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:d68f279ccfd826843dd4352d8c81c044fdc58481caf9aa64de88c7b1875665ad",
    "code": "blake3:c2aa4be2f5e968fb80aca0fcc8f93af5fa33c930c53daf8d1de268e9ced6f172",
    "schema": "blake3:04c7f63ba2a34c8a903abfd2319e51d6294d7317d3e6a797495c5ded9ffecf24",
    "profile_lock": "blake3:d22e9df8171d8bb28dd37f759996aa01f1a64d7397db141906202d71c0b03769"
  },
  "signature": "LrOMdShA2KRn7PU0jNSR6qt4h340iPu0A6yyIAUUaX7tXEyoR8kYdzdSYh2PovS7++7Cqi9Q0N9F3ZdxLRfsAg=="
}
