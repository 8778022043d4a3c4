{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:bad29eb27998c9d7",
  "name": "fs_search",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:6d5e3e0f4eb956b39bf372ea03df0a24e4214cdaa90d8864df31996bb5dea280",
    "code": "blake3:5d707e2ca3a8b28175fbb0f76d92903d9e985429bff750f5bddc7dd298b7cf50",
    "schema": "blake3:9c112c2d8b3f4cba06ba9c3c3a8a2897695bd27366945709f15531d76a24a94e",
    "profile_lock": "blake3:9108354923671da4a012c327cfe80387ebb473c74cad95cdcba42bca2a3b07dd"
  },
  "signature": "ihMKp+CQwl8Nv2bzYegQcQC2uS1j2xUga2tlTdRUnyFFrhTzKyg8dZYVVU19kNdCCzdfnPA/CLJ+7mQ4AthnAA=="
}
