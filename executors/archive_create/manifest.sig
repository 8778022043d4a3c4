{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "archive_create",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:a8e555dcdb2114ac7023e9d1d658bb2788fe6b2cce499c122553b415e28e18e1",
    "code": "blake3:9394b0576cc429737c46ea5c6aae1042a3d8182dc268d8dfe9614643a3c0b03d",
    "schema": "blake3:312722d7e12ee3aa12114efbdfd5b380f67d24afe9293a91adc04ba6cea1e967",
    "profile_lock": "blake3:ac97a7c7d68304372d728282ce6ad4e3e40fc8643480db310a15b85494ed2586"
  },
  "signature": "Mb45q9UUrO8ci0RLFVq3MOUYdUSBB3UYsB+RSXQxIwX9qvPAXGeUho5ltPz1HKvYu31J/+rb1hpsTPF7pL8KCA=="
}
