{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "weather_get",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:5bd7692520e3b34fb8a92bd52307033b30dce65a927e0a9eac0e2a36fe409648",
    "code": "blake3:c63366fb32ddd602f90c9d06d02567f91ff88988dd219204d4657627ef7f06b5",
    "schema": "blake3:290ecb0ac932f5b1dda7d5f080d9ebc73443ac7da6517424f1cc529661361847",
    "profile_lock": "blake3:d272dd0cc5d082cfa4b782569ccf684bd3bc262056e214a24773054ff1bea5ea"
  },
  "signature": "rNpDv0YSqVEh1vK/qvhhWFkMXBct77ALyvCIu+D1Cdd0bpvgEBaxFKvSdcCBHxTNUsb4pGjTVz7RUgKJWJ0RDQ=="
}
