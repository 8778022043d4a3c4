{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:bad29eb27998c9d7",
  "name": "telegram_send",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:bbf28cf8c353aad61e80b76bef1579f4285910f1045455ecca780b862065d284",
    "code": "blake3:692490cc4d567aeb178e2be6a4ae7a6a8fddd8b29ae2cf03603b8c487ebdf5ed",
    "schema": "blake3:dace2581b692f52907638314d0d3cc48f0ad01861cb286a21e61505b93d41e35",
    "profile_lock": "blake3:81f4cbc02c2f238447bc4bd225766ff732e8c434b582ea3df0896eda62a87564"
  },
  "signature": "8zvmsE70C02S5xGAH2aWfsl7y51BygoI7wBWVCBEWe1KLGKhyMJ9ykVtqDssqZVBRsKJvxC9uJX+p5tyKXG4CQ=="
}
