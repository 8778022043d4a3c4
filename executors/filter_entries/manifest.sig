{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "filter_entries",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:68cb77ce605ead079346c2457346349790f6a8958351b334bb96206ce4abbf2e",
    "code": "blake3:ec8353ac5ce58cc0967dee062384a0618695ff2b2534e4c7e2757c31e7eabb82",
    "schema": "blake3:89a984acbda5960949fc1601174947d9b7b9b88539b19ac5003680517dbbf434",
    "profile_lock": "blake3:7b273775f421714f4a71ae67a4011f5a090d793d734f35bf9e87249807ebcdab"
  },
  "signature": "8LfNmAJVujXc8PjugzkS3aWqGbTBhx4sTmOWysj9LvZ0Pc90N/lgzuVaMRnE99O/KqCQGjADL6k1AO440abQBQ=="
}
