{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "web_fetch",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:6a5f7de22b0a67a6c712bcafa26e6d769e5d5d8f3ee04cbc80ae2c5ccfe94a68",
    "code": "blake3:c5a23d6457bcc25c6c52fc9a165535a5283f7f9a843f2879e393d4cc4c5b41ef",
    "schema": "blake3:aea5eae54388e6370db3821237d117a59eacecc6cd9784ed75211478efb57440",
    "profile_lock": "blake3:95148cd5dc9f03fee30037e40b7c00500ff7bf931e7868017b5af7b08c318894"
  },
  "signature": "rLN8+zTyexgUHT/m/ElHPa5ZHH4EONPUNRdcedtWjmi1heAzSnt52gt1jQcealtcHrW/jLvqE71QjwI/jT9CAg=="
}
