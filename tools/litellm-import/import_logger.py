"""A LiteLLM proxy logging callback that writes what `routersim import` reads.

Load it from the proxy config, with this file next to the config:

    litellm_settings:
      callbacks: ["import_logger.handler"]

Two files, named by the environment (each is skipped when its variable is unset):

- ROUTERSIM_IMPORT_LOG: the standard logging payload (`kwargs["standard_logging_object"]`),
  one JSON object per line, from this `CustomLogger`'s success and failure hooks: exactly
  what every LiteLLM logging integration receives, and what its bucket loggers write.
- ROUTERSIM_SPEND_LOG: the proxy's `LiteLLM_SpendLogs` rows, one JSON object per line. A proxy
  without a database writes none, so this callback registers the proxy's own spend writer
  (`ProxyDBLogger`, which the proxy adds only when `DATABASE_URL` is set) and records each row
  where the writer would hand it to the database (`DBSpendUpdateWriter._insert_spend_log_to_db`):
  the rows, as built, by the proxy's own code (`get_logging_payload`), with no database.

Lines are appended and flushed one at a time, in the order the hooks run (a call's line is
written when it ends).
"""

import json
import os
import threading
from datetime import date, datetime

from litellm.integrations.custom_logger import CustomLogger

_LOCK = threading.Lock()


def _default(value):
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return str(value)


def _append(path, record):
    line = json.dumps(record, default=_default, sort_keys=False)
    with _LOCK, open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()


class ImportLogger(CustomLogger):
    """Writes the standard logging payload of every success and failure, one JSON per line."""

    def __init__(self, path):
        super().__init__()
        self.path = path

    def _write(self, kwargs):
        payload = kwargs.get("standard_logging_object")
        if payload is not None and self.path:
            _append(self.path, payload)

    async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):
        self._write(kwargs)

    async def async_log_failure_event(self, kwargs, response_obj, start_time, end_time):
        self._write(kwargs)


def _record_spend_logs(path):
    """The proxy's spend-log writer, with the database replaced by a file."""
    import litellm
    from litellm.proxy.db.db_spend_update_writer import DBSpendUpdateWriter
    from litellm.proxy.hooks.proxy_track_cost_callback import ProxyDBLogger

    async def insert(self, payload, prisma_client=None, spend_logs_url=None, llm_router=None):
        row = {k: v for k, v in dict(payload).items() if k != "accounting_payload"}
        _append(path, row)
        return prisma_client

    DBSpendUpdateWriter._insert_spend_log_to_db = insert
    db_logger = ProxyDBLogger()
    litellm.logging_callback_manager.add_litellm_callback(db_logger)
    litellm.logging_callback_manager.add_litellm_async_success_callback(db_logger)


if os.environ.get("ROUTERSIM_SPEND_LOG"):
    _record_spend_logs(os.environ["ROUTERSIM_SPEND_LOG"])

handler = ImportLogger(os.environ.get("ROUTERSIM_IMPORT_LOG"))
