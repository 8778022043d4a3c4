{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "mail_read",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:9f5135429b14124b254edf44bfb3415747a98a04ab8be469bb73dff29d61a2de",
    "code": "blake3:1cdf34c87fa4a30dbadc8b3223b3c3aa4be3dfb93aa7840c48c7e6d7b0f0f88d",
    "schema": "blake3:2c8afafc5ce253fef932eeee923a7559f1123516e60a8146a6491842844114cd",
    "profile_lock": "blake3:cd742ea9fa4a64005776a62145ee7ca9d059e70914c9f2d5e49665b9f43f8bbb"
  },
  "signature": "STnGxCrP3B1E/Mt+dO3iflnnCOev0RfOLxj4eJkeoSUbCkw5DhV8jQ7fgQJtmi0hBQHwLKaJ2bvQRYQYBe7+AQ=="
}
