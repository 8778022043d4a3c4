{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:bad29eb27998c9d7",
  "name": "time_now",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:402d0b6e296f006950b659f2313084bb85a46c632b524c924e05408b6228146f",
    "code": "blake3:a89aa3a9875752b66019763f38dc49362ac877241847910925eb7de3336bbbc8",
    "schema": "blake3:3a83ffabfd770e9c52e73fde077921df857edb0a454ae8f2e7f4790361c16712",
    "profile_lock": "blake3:f0c5d14fe0f714287bdbf73c880bf6058b214ad372af50efe78a016bbe732e9f"
  },
  "signature": "TI9Tq6TRBNKg22iVne+9dnMBSRdQuyNX5YP8pP++neJ9unm8T4SCKPhS5YzU6v2KfL9jplnywKiryjFHrpHdBQ=="
}
