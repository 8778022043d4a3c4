{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "mail_folders",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:d68f279ccfd826843dd4352d8c81c044fdc58481caf9aa64de88c7b1875665ad",
    "code": "blake3:a200889f209da5416647b6dfc5b99ff3d9edc131f97ca160d3d615b5b03fd20b",
    "schema": "blake3:04c7f63ba2a34c8a903abfd2319e51d6294d7317d3e6a797495c5ded9ffecf24",
    "profile_lock": "blake3:d22e9df8171d8bb28dd37f759996aa01f1a64d7397db141906202d71c0b03769"
  },
  "signature": "Bb2WyZwFU5kDEyGC7BYWtFAOscYxH2ws5um1DQ8wfAqlfm+RkhJuW1iDrTa4VOGHdBoU02vgn5DZwxuX1MSYBg=="
}
