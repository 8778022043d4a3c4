{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:bad29eb27998c9d7",
  "name": "fs_search",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:6d5e3e0f4eb956b39bf372ea03df0a24e4214cdaa90d8864df31996bb5dea280",
    "code": "blake3:0b210e17e201fcae7c82b33ac5227dc97c57d4010bd32ae8e2b22b1ab27ec77c",
    "schema": "blake3:957b578c497d9abb55c5134578368bfe0a9fdf631fd527c5505a27d47a7b3dd5",
    "profile_lock": "blake3:9108354923671da4a012c327cfe80387ebb473c74cad95cdcba42bca2a3b07dd"
  },
  "signature": "+9npHD8aXUBUBtsp437N1EsPTCp0lqkSm7bWmq97RAqKcMUGhi57JDWfuL/qlfUKz12xSm2ixn/vffVRImaHBA=="
}
