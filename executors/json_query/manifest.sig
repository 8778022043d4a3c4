{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "json_query",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:e5a2ce672a1e8d306521c2b51d70d843cb13a1c7552761a78025f6c12e177233",
    "code": "blake3:c57950462d51562e8f6c1f6c9b24072d6ed441501b1f5ff2c7e3cd4f20daa5f1",
    "schema": "blake3:3bdffcbe396e875c239d588a1ec7c9fe0426dab4d3271fdac60fe241a2966e89",
    "profile_lock": "blake3:d9a0d1bd37c6015013b51814f7b61802493185b1b33c59c4ba4861eb6ae6fdd0"
  },
  "signature": "KpUjEK8oOB0SCOy8PgRb6IEaXM1oKQCL2vSlbO6tYO3p69c89KvDLuyxiLdh1CM8YNao8tjxDoE8wF39sISJDg=="
}
