"""What a CLI test reads of stdout when a command failed: nothing, or with --json the error as JSON
({"error": the stderr line's words}, capmodel.cli's one convention for every --json command)."""
import json


def error_only(out: str, err: str) -> bool:
    if out == "":
        return True
    answer = json.loads(out)
    return list(answer) == ["error"] and answer["error"] in err
