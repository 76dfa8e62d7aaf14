"""Schemathesis hooks for test/fuzz/run.sh (loaded through SCHEMATHESIS_HOOKS).

They shape only the stateful phase, which walks the document's links (create a chat, send to it,
poll, decide), so that its chains reach a plan decision as a client's would:

- each request gets an Idempotency-Key of its own, as a client gives each new request: Hypothesis
  draws the same few short keys over and over, so nearly every send of a chain was refused 422
  IDEMPOTENCY_KEY_REUSED and the chain stopped there;
- a send that leaves planMode out asks for a plan (drawn, it was set in 2 sends of 72) for an
  image of its drawn text (the local model plans only a tool call), so a chain has a plan to
  decide;
- a poll waits, as a client's poll loop does, until the run has settled (waits for its decision,
  or ended), so the snapshot it follows a link from holds the waitpoint to decide.

A value drawn invalid is left as drawn (a negative case stays negative), and the other phases keep
every drawn value, so key reuse with another body and every planMode are still fuzzed.
"""

import re
import time
import uuid
from email.parser import BytesParser
from email.policy import HTTP

import requests
import schemathesis
from schemathesis.core.failures import AcceptedNegativeData
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation.meta import GenerationMode, TestPhase

SEND = "POST /api/v1/completions"
POLL = "GET /api/v1/chats/{chatId}/runs/{runId}"
UNSETTLED = {"QUEUED", "RUNNING"}
SETTLE_SECONDS = 10


def _stateful(case):
    return case.meta is not None and case.meta.phase.name == TestPhase.STATEFUL


def _positive(case, location):
    component = case.meta.components.get(location)
    return component is not None and component.mode == GenerationMode.POSITIVE


@schemathesis.hook
def before_call(context, case, kwargs):
    if not _stateful(case):
        return
    for name in list(case.headers or {}):
        if name.lower() == "idempotency-key" and re.fullmatch(r"[!-~]{1,255}", str(case.headers[name])):
            case.headers[name] = str(uuid.uuid4())
    label = case.operation.label
    if label == SEND and isinstance(case.body, dict) and "planMode" not in case.body:
        if _positive(case, ParameterLocation.BODY) and isinstance(case.body.get("text"), str):
            # The JSON body takes a boolean, the multipart form the string.
            case.body["planMode"] = "true" if "multipart" in (case.media_type or "") else True
            case.body["text"] = "Generate an image of " + case.body["text"][:8000]
    if label == POLL:
        request = case.as_transport_kwargs(base_url=kwargs.get("base_url"))
        deadline = time.monotonic() + SETTLE_SECONDS
        while time.monotonic() < deadline:
            answer = requests.get(request["url"], headers=request.get("headers"), timeout=5)
            if answer.status_code != 200 or answer.json().get("status") not in UNSETTLED:
                return
            time.sleep(0.05)


# Where a negative case's mutation is, as Schemathesis names it in the failure: a field's value
# ("violates `type` at /properties/chatId", "… at /anyOf/0/properties/file") or a field left out
# ("violates `required` at /anyOf/1 (was files)").
FIELD_MUTATION = re.compile(r"at \S*/properties/(\w+)|`required` at \S+ \(was (\w+)\)")
# A form's files, in either field, count together up to their maxItems; an upload takes one at
# least (its anyOf). Any bytes are a valid binary value.
FILE_FIELDS = {"file", "files"}


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Keeps every failure but those Schemathesis makes up, each "schema-violating request accepted"
    for a request that, as sent, was valid:

    - in the stateful phase, a link that puts an id into the body (`chatId` from a created chat)
      overwrites the field a negative case had made invalid; Schemathesis records that no
      mutation is left ("Positive test case"), and only then is the failure dropped;
    - a multipart form's negative case whose mutation did not go out: the serializer sends no part
      for an empty list, and puts its own sample file into a binary field. A multipart case is
      judged by the request as sent (_sent_parts); it is dropped when:
      - its mutated field is a file field and an allowed number of files went out after all
        (CI, seed 2980296345: "violates `required` at /anyOf/0/properties/file" sent as a PNG
        under `file`; seed 3930897367: "violates `required` at /anyOf/1 (was files)" sent as a
        JPEG under `file`);
      - its mutated field is an optional one that went out as no part (seed 3930897367:
        "violates `type` at /properties/chatId (was string, became array)", an empty list);
      - every field it adds beyond the form went out as no part (seed 1898174763: "violates
        `additionalProperties`" sent as a lone PNG under `file`).
      In each the upload was rightly stored, 201.

    A negative case whose mutation went out (a file field's with no file at all, a required
    field's left out, an optional field's with a value) and is accepted still fails the run, as
    does one whose mutation is anywhere else in the request.
    """
    if not isinstance(failure, AcceptedNegativeData) or case.meta is None:
        return True
    if _stateful(case) and not case.meta.phase.data.mutations:
        return False
    if "multipart/form-data" not in (case.media_type or ""):
        return True
    form = case.operation.get_body_for_media_type(case.media_type)
    if form is None:
        return True
    message = failure.message or ""
    sent = _sent_parts(response.request)
    if "additionalProperties" in message:
        drawn = case.body if isinstance(case.body, dict) else {}
        extra = [name for name in drawn if name not in form.form_properties]
        return not extra or any(name in sent for name in extra)
    mutation = FIELD_MUTATION.search(message)
    if mutation is None:
        return True
    field = mutation.group(1) or mutation.group(2)
    schema = form.resolved_schema or {}
    if field in FILE_FIELDS:
        files = [payload for name in FILE_FIELDS for payload in sent.get(name, []) if payload]
        limits = [p.get("maxItems") for n, p in form.form_properties.items() if n in FILE_FIELDS]
        most = min([limit for limit in limits if limit is not None], default=len(files))
        needs_file = any(FILE_FIELDS & set(b.get("required", [])) for b in schema.get("anyOf", []))
        return not int(needs_file) <= len(files) <= most
    return field in sent or field in schema.get("required", [])


def _sent_parts(request):
    """A multipart request's parts as they went out: each field's name and its payloads."""
    body = request.body if isinstance(request.body, bytes) else str(request.body or "").encode()
    head = f"Content-Type: {request.headers.get('Content-Type', '')}\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + body)
    parts = {}
    if message.is_multipart():
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            parts.setdefault(name, []).append(part.get_payload(decode=True) or b"")
    return parts
