{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:bad29eb27998c9d7",
  "name": "fs_move",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:936163cf180d82ce0e20192cf8fa9bb66e875fd356f6c0bfc0e52d39e417ee0c",
    "code": "blake3:c38566074e711476231a6d1c20b6f193caa6011e42dd3b0ab08ba979f2942aee",
    "schema": "blake3:dde1482a3b5d200b1332e50267dc6109491c6a9d6188afcab90006a86edef7d4",
    "profile_lock": "blake3:d21bd1f6d5e7ffcd5d4c56883c6f91601c9f65d763aaacbc835c546045c19426"
  },
  "signature": "PfBq+RueIsMkA+BdYXzdDSpvyRlOFzhyxCH0lMmzpPD1Uvhp0PY+yafpv/Qm+9iPscCbVd97o2fJLXzFgJ+6Cw=="
}
