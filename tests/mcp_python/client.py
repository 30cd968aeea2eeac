"""herd mcp driven by the official MCP Python SDK (`mcp`, pinned in requirements.txt): prints,
as one JSON object, what the client saw. The Rust test (tests/mcp_python_e2e.rs) judges it.

    client.py HERD_BINARY TASKS_FILE
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def type_arrays(schema, at, found):
    """Every `"type"` that is not one string, and every null branch, anywhere in a schema."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "type" and not isinstance(value, str):
                found.append(f"{at}: type {value!r}")
            type_arrays(value, f"{at}/{key}", found)
    elif isinstance(schema, list):
        for index, item in enumerate(schema):
            if isinstance(item, dict) and item.get("type") == "null":
                found.append(f"{at}/{index}: a null branch")
            type_arrays(item, f"{at}/{index}", found)


def text_of(result):
    return "\n".join(part.text for part in result.content if getattr(part, "text", None))


async def main(herd, tasks):
    seen = {}
    server = StdioServerParameters(command=herd, args=["mcp", "--tasks", tasks])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            seen["tools"] = [tool.name for tool in tools]
            found = []
            for tool in tools:
                type_arrays(tool.inputSchema, tool.name, found)
            seen["unportable"] = found

            listed = await session.call_tool("list_tasks", {})
            seen["empty_list"] = {"is_error": listed.isError, "structured": listed.structuredContent}

            mistyped = await session.call_tool(
                "wait_for", {"task_id": "first", "timeout_sec": "soon"}
            )
            seen["mistyped"] = {"is_error": mistyped.isError, "text": text_of(mistyped)}

            added = await session.call_tool(
                "add_task",
                {
                    "task": {
                        "task_id": "first",
                        "agent": "sim",
                        "inputs": {"scenario": "success"},
                        "prompt_template": "Do it. When complete, print exactly: TASK_COMPLETE:{task_id}",
                    }
                },
            )
            seen["added"] = {"is_error": added.isError, "structured": added.structuredContent}
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
