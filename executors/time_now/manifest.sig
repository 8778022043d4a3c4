{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "time_now",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:402d0b6e296f006950b659f2313084bb85a46c632b524c924e05408b6228146f",
    "code": "blake3:20f73fa5eaeb2954511d4090d3a42e20ca70b1ac1aa0ec7cd9386f1697c53e3f",
    "schema": "blake3:3a83ffabfd770e9c52e73fde077921df857edb0a454ae8f2e7f4790361c16712",
    "profile_lock": "blake3:f0c5d14fe0f714287bdbf73c880bf6058b214ad372af50efe78a016bbe732e9f"
  },
  "signature": "eOAEyv7wfDJ8KVQcKBjvJTJcQrd9gfF5ulT1urqA/zSxEIKXFA2lkPF35j6jLpdWKwa+wv/OO0QkPgliOhDlBg=="
}
