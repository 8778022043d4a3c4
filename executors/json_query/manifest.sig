{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:bad29eb27998c9d7",
  "name": "json_query",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:e5a2ce672a1e8d306521c2b51d70d843cb13a1c7552761a78025f6c12e177233",
    "code": "blake3:7ba4451e4b07a588233da6670582fdc8f08cfb4f6cf6dc4c947d6cff7ec2c622",
    "schema": "blake3:d0c877f402e66b02bee85d6673064fdef06e3e56cb6b0a47e76c7d673eca3afd",
    "profile_lock": "blake3:d9a0d1bd37c6015013b51814f7b61802493185b1b33c59c4ba4861eb6ae6fdd0"
  },
  "signature": "P/rpJP43YmYMR4BtG1If+Oz6Z4rE+gFSu5ZzYMOHnNmWFhArrA87sJHQdgM6OLPYaCUAmYPloWHjxYjj3cOoBQ=="
}
