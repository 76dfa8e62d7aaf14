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


# A mutation of a multipart form's file fields (`file`, `files`: format binary), as Schemathesis
# names it in the failure ("… at /anyOf/0/properties/file").
FILE_FIELD_MUTATION = re.compile(r"/properties/files?\b")


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Keeps every failure but three that Schemathesis makes up; each is "schema-violating request
    accepted" for a request that, as sent, was valid:

    - in the stateful phase, a link that puts an id into the body (`chatId` from a created chat)
      overwrites the field a negative case had made invalid; Schemathesis records that no
      mutation is left ("Positive test case"), and only then is the failure dropped;
    - a negative case made by a multipart form's file field goes out with a real file in it: the
      multipart serializer puts its own sample file into a binary field (CI, seed 2980296345: a
      case "violates `required` at /anyOf/0/properties/file" was sent as a PNG under `file`, and
      the upload was rightly stored, 201);
    - a negative case that adds a field to a multipart form with an empty list for its value: no
      part goes out for it (see _extra_fields_unsent).

    A negative case that keeps its mutation, or whose mutation is anywhere else in the request,
    and is accepted still fails the run.
    """
    if not isinstance(failure, AcceptedNegativeData) or case.meta is None:
        return True
    if _stateful(case) and not case.meta.phase.data.mutations:
        return False
    multipart = "multipart/form-data" in (case.media_type or "")
    if multipart and "additionalProperties" in (failure.message or "") and _extra_fields_unsent(case):
        return False
    return not (multipart and FILE_FIELD_MUTATION.search(failure.message or ""))


def _extra_fields_unsent(case):
    """Whether every field a multipart case adds beyond its form is an empty list, which the
    serializer sends as no part at all: the request as sent has no extra field (CI, seed
    1898174763: a case "violates `additionalProperties`" went out as a lone PNG under `file`, and
    the upload was rightly stored, 201)."""
    if not isinstance(case.body, dict):
        return False
    body = case.operation.get_body_for_media_type(case.media_type)
    properties = body.form_properties if body is not None else {}
    extra = [name for name in case.body if name not in properties]
    return bool(extra) and all(case.body[name] == [] for name in extra)
