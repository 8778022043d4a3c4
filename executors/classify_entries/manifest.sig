{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "classify_entries",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:75eef1d1bd803a5c8bde3e97bc213ee5f102950aac8280c4c8fe043075b0f8bb",
    "code": "blake3:1d38e140773f04d3139948fafcfba16b6b1c2f19ab567633293bdce7424bc165",
    "schema": "blake3:55bee88f6f30789b6a2cf4c1d3202093bd389c3f12e454240f38d61d665dbc46",
    "profile_lock": "blake3:ec31e76aeb7e45533a27db14899d9596c808489070be0b7591a39aca5ea9f85c"
  },
  "signature": "5B2JtH0PuVYRa3elo/1SMDKeGYpSQs1dm7lYfhCo8DW2wlNzXnIQV565Xjx1W8/XTQWzCKtRC+xEjpAuxjN9BQ=="
}
