{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "sort_entries",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:d9b39d38831af8ce07697affb8c4afcdbcdba9a4daa336956fdae0ae6dfe64ac",
    "code": "blake3:1d6e69be8d770f86b95dfc1e461be3120d22ecd471ba61d866cdbfd0d817778e",
    "schema": "blake3:dabde5fcebb9af5a445d54b78659144d35c3be7a357fa06ba749b8c9fc75d9b6",
    "profile_lock": "blake3:7b273775f421714f4a71ae67a4011f5a090d793d734f35bf9e87249807ebcdab"
  },
  "signature": "AsxTVIezMSZXfKK8TpCj4dq2C7KPMDmIbwAC87DPZK4PKeCbmUlazSGQf7aQsrFgcJ1RmxKDYo+mL3tuDhHDCQ=="
}
