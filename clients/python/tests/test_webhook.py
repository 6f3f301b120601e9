import hashlib
import hmac
import json
import os
import tempfile
import unittest

import _path  # noqa: F401
from sluice_client import WebhookVerificationError, load_webhook_secret, sign_webhook, verify_webhook

SECRET = "s3cret-value"
BODY = json.dumps({"delivery_id": "d-1", "launch_id": "L1", "gseq": 12,
                   "event": {"seq": 3, "time": 1, "name": "observed", "context": {}, "caller": None,
                             "state": "RUNNING", "gseq": 12, "launch_id": "L1"},
                   "state": "RUNNING", "result_code": None, "reason": None}).encode()
TS = 1700000000


def headers(sig=None, ts=TS, delivery="d-1"):
    mac = hmac.new(SECRET.encode(), b"%d." % ts + BODY, hashlib.sha256).hexdigest()
    return {"X-Sluice-Signature": sig or "sha256=" + mac, "X-Sluice-Timestamp": str(ts),
            "X-Sluice-Delivery": delivery, "X-Sluice-Event": "observed"}


class WebhookTest(unittest.TestCase):
    def test_valid(self):
        d = verify_webhook(SECRET, headers(), BODY, now=TS + 10)
        self.assertEqual((d.delivery_id, d.launch_id, d.gseq, d.state), ("d-1", "L1", 12, "RUNNING"))
        self.assertEqual(d.event.name, "observed")
        self.assertEqual(d.timestamp, TS)

    def test_header_names_any_case_and_bytes_secret(self):
        h = {k.lower(): v for k, v in headers().items()}
        self.assertEqual(verify_webhook(SECRET.encode(), h, BODY, now=TS).launch_id, "L1")

    def test_sign_matches_hmac(self):
        self.assertEqual(sign_webhook(SECRET, TS, BODY), headers()["X-Sluice-Signature"])

    def test_rejects(self):
        bad = [
            (SECRET, headers(sig="sha256=" + "0" * 64), BODY),
            ("other", headers(), BODY),
            (SECRET, headers(), BODY.replace(b"L1", b"L2")),
            (SECRET, dict(headers(), **{"X-Sluice-Timestamp": str(TS + 1)}), BODY),  # not the signed time
            (SECRET, {"X-Sluice-Timestamp": str(TS)}, BODY),
            (SECRET, {"X-Sluice-Signature": headers()["X-Sluice-Signature"]}, BODY),
            (SECRET, headers(delivery="d-2"), BODY),
        ]
        for secret, h, body in bad:
            with self.assertRaises(WebhookVerificationError):
                verify_webhook(secret, h, body, now=TS)

    def test_secret_file_like_the_service(self):
        with tempfile.NamedTemporaryFile("wb", delete=False) as f:
            f.write(SECRET.encode() + b" \n\n")
        try:
            self.assertEqual(load_webhook_secret(f.name), SECRET.encode())
            self.assertEqual(verify_webhook(load_webhook_secret(f.name), headers(), BODY, now=TS).gseq, 12)
        finally:
            os.unlink(f.name)

    def test_too_old_and_tolerance_off(self):
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(SECRET, headers(), BODY, now=TS + 301)
        self.assertEqual(verify_webhook(SECRET, headers(), BODY, now=TS + 10 ** 6, tolerance_s=None).gseq, 12)


if __name__ == "__main__":
    unittest.main()
