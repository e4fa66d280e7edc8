"""The client's event-loop thread: one daemon thread running one event loop until ``stop``.

Prefect runs mapped tasks in a thread pool, each thread possibly with its own event loop, while an
async HTTP client must stay on the loop it was first used on; so the client owns one such thread.
"""

from __future__ import annotations

import asyncio
import threading

__all__ = ["LoopThread"]


class LoopThread:
    """One daemon thread running one event loop until ``stop``."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    def cancel_pending(self, timeout: float = 10) -> None:
        """Cancel every task still running on the loop, so no caller waits forever on a closed client."""

        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(cancel_all(), self.loop).result(timeout=timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self.loop.close()
