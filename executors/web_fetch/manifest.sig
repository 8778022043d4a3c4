{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:bad29eb27998c9d7",
  "name": "web_fetch",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:6a5f7de22b0a67a6c712bcafa26e6d769e5d5d8f3ee04cbc80ae2c5ccfe94a68",
    "code": "blake3:fe4dad4873e8c483ba01c26901e49b8397a8bba30a8b97c5a89040ded7186a06",
    "schema": "blake3:aea5eae54388e6370db3821237d117a59eacecc6cd9784ed75211478efb57440",
    "profile_lock": "blake3:95148cd5dc9f03fee30037e40b7c00500ff7bf931e7868017b5af7b08c318894"
  },
  "signature": "CxKwZET/vxKmbORkLN3cl2bI/VybiAhOvuKHEeplnGGgjgVTXBmH38KtPLLVQ3E7hgZSlARlvpQr3++JvB4WCA=="
}
