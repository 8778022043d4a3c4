{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "telegram_send",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:bbf28cf8c353aad61e80b76bef1579f4285910f1045455ecca780b862065d284",
    "code": "blake3:d42d1f358bae03440c8c71f6517258afbf095ed8a7441958e89a89dce6034372",
    "schema": "blake3:907c813be3f52280e26f364e90a51c3e0b7518d3ed472f8d3d2a65457b405250",
    "profile_lock": "blake3:81f4cbc02c2f238447bc4bd225766ff732e8c434b582ea3df0896eda62a87564"
  },
  "signature": "ZzRXfFhf50nFgLg4cMsWrbxufYzMzKAmCfWUqWLzrmqKEtIgmoz3wOsQaVMq3Xu8H0ynhXivebg6psmeSaAuBg=="
}
