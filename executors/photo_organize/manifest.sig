{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "photo_organize",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:603052bce63f27de5b4820710d4573a938954e317525fd80791ec0a5ea696c27",
    "code": "blake3:c0d9f3ccc73934c5fc9c4005abf341d1ddebb6d38cbfc8da388fa7138688aed2",
    "schema": "blake3:5d3dcef3af4909fc8e070f5e464c48e5805b59eaa2f21acdefc11ab7170e5927",
    "profile_lock": "blake3:a555de7ed359eebe92df6c696bebb340e0b9a40bca7e83a00457e0ffdee60d66"
  },
  "signature": "zYDa1UOQoRkMh2HoVd4Y/cwA2ys6UncVc8hLFq1tqBrzTLN3/QqgWq+wVWXOl1lxDNIFqQUMzoXvg34xM9EiDQ=="
}
