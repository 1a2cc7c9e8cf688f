"""A small petstore API in FastAPI, for the OpenAPI bridge's tests: list (query ``limit``
and the array ``tags``), get by id (path), create (JSON body), delete, a header parameter,
an endpoint that fails with 500, one that echoes the ``Authorization`` it got, and an admin
endpoint (tag ``admin``) for route maps to leave out."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import FastAPI, Header, HTTPException, Query, Request, Response
from pydantic import BaseModel


class NewPet(BaseModel):
    name: str
    tag: str | None = None


class Pet(NewPet):
    id: int


class WhoAmI(BaseModel):
    request_id: str
    authorization: str | None = None


def make_petstore() -> FastAPI:
    """A fresh app with three pets (ids 1, 2, 3)."""
    pets: dict[int, Pet] = {
        1: Pet(id=1, name="Rex", tag="dog"),
        2: Pet(id=2, name="Tom", tag="cat"),
        3: Pet(id=3, name="Nemo", tag="fish"),
    }
    events: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, str]]:
        events.append("startup")
        yield {"greeting": "hello from the lifespan"}
        events.append("shutdown")

    api = FastAPI(title="Petstore", version="1.2.3", lifespan=lifespan)
    api.state.events = events

    @api.get("/pets", operation_id="list_pets", tags=["pets"], summary="List pets")
    def list_pets(limit: int = 10, tags: Annotated[list[str] | None, Query()] = None) -> list[Pet]:
        """Pets, at most ``limit`` of them, only those tagged with one of ``tags``."""
        found = [pet for pet in pets.values() if not tags or pet.tag in tags]
        return found[:limit]

    @api.get("/pets/{pet_id}", operation_id="get_pet", tags=["pets"], summary="Get a pet")
    def get_pet(pet_id: int) -> Pet:
        if pet_id not in pets:
            raise HTTPException(404, f"no pet {pet_id}")
        return pets[pet_id]

    @api.post("/pets", operation_id="create_pet", tags=["pets"], status_code=201)
    def create_pet(pet: NewPet) -> Pet:
        """Add a pet."""
        created = Pet(id=max(pets, default=0) + 1, **pet.model_dump())
        pets[created.id] = created
        return created

    @api.delete("/pets/{pet_id}", operation_id="delete_pet", tags=["pets"], status_code=204)
    def delete_pet(pet_id: int) -> Response:
        if pets.pop(pet_id, None) is None:
            raise HTTPException(404, f"no pet {pet_id}")
        return Response(status_code=204)

    @api.get("/whoami", operation_id="who_am_i")
    def who_am_i(x_request_id: Annotated[str, Header()], request: Request) -> WhoAmI:
        return WhoAmI(request_id=x_request_id, authorization=request.headers.get("authorization"))

    @api.get("/greeting", operation_id="greeting")
    def greeting(request: Request) -> dict[str, str]:
        """What the lifespan left in the request state."""
        return {"greeting": getattr(request.state, "greeting", "no lifespan")}

    @api.get("/boom", operation_id="boom")
    def boom() -> dict[str, str]:
        raise HTTPException(500, "the server broke")

    @api.get("/admin/stats", operation_id="admin_stats", tags=["admin"])
    def admin_stats() -> dict[str, int]:
        return {"pets": len(pets)}

    return api
