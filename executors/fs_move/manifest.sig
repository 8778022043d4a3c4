{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:bad29eb27998c9d7",
  "name": "fs_move",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:936163cf180d82ce0e20192cf8fa9bb66e875fd356f6c0bfc0e52d39e417ee0c",
    "code": "blake3:c1ed70aefbed62c8f048d75ac6797445432d52f3f45d20d93efa2bfafa3d2114",
    "schema": "blake3:dde1482a3b5d200b1332e50267dc6109491c6a9d6188afcab90006a86edef7d4",
    "profile_lock": "blake3:d21bd1f6d5e7ffcd5d4c56883c6f91601c9f65d763aaacbc835c546045c19426"
  },
  "signature": "V6kTog1V+9T73nixt3U7rMu0X8gMRaZD/ZSlf3tlLvEuHdRk+NkP8B3O8giwKsXrRUzf/0MYDtd89Ot3/CuQAg=="
}
