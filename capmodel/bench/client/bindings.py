"""The bindings (``--binding``): how an operation reaches the server, one class per driver library with the same
methods, each returning the number of documents the operation counts for (YCSB's DB interface, its "binding": the
workload says what to do, a binding how).

- ``PymongoBinding``: pymongo's synchronous ``Collection``; its methods return the count. Worker threads call them.
- ``MongojetBinding``: mongojet's asynchronous ``Collection`` (a Rust core: the I/O and connection handling run
  outside the GIL); its methods are coroutines, awaited by worker tasks on one event loop. mongojet has no
  client-side operation timeout (it refuses ``timeoutMS`` and ``socketTimeoutMS``), so every call is wrapped in
  ``asyncio.timeout`` and a stalled server ends the operation with ``TimeoutError``.

Both take filters, updates and pipelines as built by the workload's templates, and sort specs as ``[(field, dir)]``.
"""
from __future__ import annotations

import asyncio


class PymongoBinding:
    """Operations on a pymongo collection (synchronous)."""

    asynchronous = False

    def __init__(self, collection):
        self.collection = collection
        self.database = collection.database

    def ping(self):
        self.database.client.admin.command("ping")
        return 1

    def read(self, filter, projection=None):
        self.collection.find_one(filter, projection)
        return 1

    def scan(self, filter, projection, sort, limit):
        list(self.collection.find(filter, projection, sort=sort, limit=limit))
        return 1

    def find(self, filter, projection, sort, limit):
        return len(list(self.collection.find(filter, projection, sort=sort, limit=limit)))

    def ycsb_update(self, filter, update):
        self.collection.update_one(filter, update)
        return 1

    def update(self, filter, update, many=False):
        method = self.collection.update_many if many else self.collection.update_one
        return method(filter, update).modified_count

    def read_modify_write(self, filter, projection, update):
        self.collection.find_one(filter, projection)
        self.collection.update_one(filter, update)
        return 1

    def insert_one(self, document):
        self.collection.insert_one(document)
        return 1

    def insert_many(self, documents):
        self.collection.insert_many(documents, ordered=False)
        return len(documents)

    def delete(self, filter, many=False):
        method = self.collection.delete_many if many else self.collection.delete_one
        return method(filter).deleted_count

    def aggregate(self, pipeline):
        return len(list(self.collection.aggregate(pipeline)))

    def command(self, command):
        self.database.command(command)
        return 1


class MongojetBinding:
    """Operations on a mongojet collection (coroutines), each bounded by ``timeout_s`` on the client side."""

    asynchronous = True

    def __init__(self, collection, timeout_s: float):
        self.collection = collection
        self.database = collection.database
        self.timeout_s = timeout_s

    async def ping(self):
        async with asyncio.timeout(self.timeout_s):
            await self.database.client.get_database("admin").run_command({"ping": 1})
        return 1

    async def read(self, filter, projection=None):
        async with asyncio.timeout(self.timeout_s):
            if projection is None:
                await self.collection.find_one(filter)
            else:
                await self.collection.find_one(filter, projection=projection)
        return 1

    async def _find(self, filter, projection, sort, limit) -> int:
        options = {"limit": limit} if limit else {}
        if projection is not None:
            options["projection"] = projection
        if sort:
            options["sort"] = dict(sort)
        async with asyncio.timeout(self.timeout_s):
            return len(await self.collection.find_many(filter, **options))

    async def scan(self, filter, projection, sort, limit):
        await self._find(filter, projection, sort, limit)
        return 1

    async def find(self, filter, projection, sort, limit):
        return await self._find(filter, projection, sort, limit)

    async def ycsb_update(self, filter, update):
        async with asyncio.timeout(self.timeout_s):
            await self.collection.update_one(filter, update)
        return 1

    async def update(self, filter, update, many=False):
        method = self.collection.update_many if many else self.collection.update_one
        async with asyncio.timeout(self.timeout_s):
            return int((await method(filter, update)).get("modified_count", 0))

    async def read_modify_write(self, filter, projection, update):
        await self.read(filter, projection)
        await self.ycsb_update(filter, update)
        return 1

    async def insert_one(self, document):
        async with asyncio.timeout(self.timeout_s):
            await self.collection.insert_one(document)
        return 1

    async def insert_many(self, documents):
        async with asyncio.timeout(self.timeout_s):
            await self.collection.insert_many(documents, ordered=False)
        return len(documents)

    async def delete(self, filter, many=False):
        method = self.collection.delete_many if many else self.collection.delete_one
        async with asyncio.timeout(self.timeout_s):
            return int((await method(filter)).get("deleted_count", 0))

    async def aggregate(self, pipeline):
        async with asyncio.timeout(self.timeout_s):
            cursor = await self.collection.aggregate(pipeline)
            return len(await cursor.to_list())

    async def command(self, command):
        async with asyncio.timeout(self.timeout_s):
            await self.database.run_command(command)
        return 1
