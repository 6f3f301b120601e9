import unittest

import _path  # noqa: F401
from sluice_client.sse import SSEParser, parse_lines


class SSEParserTest(unittest.TestCase):
    def test_service_frames(self):
        raw = (b"id: 7\nevent: accepted\ndata: {\"gseq\": 7}\n\n"
               b": keep-alive\n\n"
               b"id: 8\nevent: observed\ndata: {\"gseq\": 8}\n\n")
        msgs = list(parse_lines(raw.splitlines(keepends=True)))
        self.assertEqual([(m.id, m.event, m.data) for m in msgs],
                         [("7", "accepted", '{"gseq": 7}'), ("8", "observed", '{"gseq": 8}')])

    def test_crlf_multiline_data_and_no_space(self):
        raw = [b"id:3\r\n", b"data:a\r\n", b"data: b\r\n", b"\r\n"]
        (m,) = list(parse_lines(raw))
        self.assertEqual((m.id, m.event, m.data), ("3", "message", "a\nb"))

    def test_comments_only_dispatch_nothing(self):
        p = SSEParser()
        for line in (b": keep-alive\n", b"\n", b": x\n", b"\n"):
            self.assertIsNone(p.feed(line))

    def test_id_persists_and_retry(self):
        p = SSEParser()
        p.feed("id: 5\n")
        p.feed("retry: 1500\n")
        m = p.feed("data: x\n") or p.feed("\n")
        self.assertEqual(m.id, "5")
        self.assertEqual(p.retry, 1500)
        p.feed("data: y\n")
        m2 = p.feed("\n")
        self.assertEqual(m2.id, "5")  # the last event id carries over

    def test_id_with_nul_is_ignored(self):
        p = SSEParser("4")
        p.feed("id: 9\0\n")
        p.feed("data: x\n")
        self.assertEqual(p.feed("\n").id, "4")

    def test_truncated_message_is_dropped_and_reset_keeps_id(self):
        # A connection that breaks mid-message: the half message is never
        # dispatched, and the resume id is the last complete one.
        lines = [b"id: 1\n", b"data: {}\n", b"\n", b"id: 2\n", b"data: {\"half\""]
        p = SSEParser()
        got = [m for m in (p.feed(x) for x in lines) if m]
        self.assertEqual([m.id for m in got], ["1"])
        p.reset()
        self.assertEqual(p.feed(b"\n"), None)
        # the id field of the cut message was seen: the stream layer resumes
        # from the gseq of the last event it yielded, not from this
        self.assertEqual(p.last_event_id, "2")

    def test_unknown_field_ignored(self):
        p = SSEParser()
        p.feed("foo: bar\n")
        p.feed("data: z\n")
        self.assertEqual(p.feed("\n").data, "z")


if __name__ == "__main__":
    unittest.main()
