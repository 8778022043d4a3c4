{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "mail_read",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:9f5135429b14124b254edf44bfb3415747a98a04ab8be469bb73dff29d61a2de",
    "code": "blake3:997e37241a039e127109310d1abc81f944efb03fdd83499cf1d4f599757173d1",
    "schema": "blake3:2c8afafc5ce253fef932eeee923a7559f1123516e60a8146a6491842844114cd",
    "profile_lock": "blake3:cd742ea9fa4a64005776a62145ee7ca9d059e70914c9f2d5e49665b9f43f8bbb"
  },
  "signature": "gEzYUD6PJyL/SK/71jfv6V8LMgR/irleZV3243RJ5xZeqyNI8H30lwZwm/cw64osLwJ4bYsfNZDWO1AzpzP/AQ=="
}
