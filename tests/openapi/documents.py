"""Hand-written OpenAPI documents for the bridge's tests: a 3.0 one (components, ``$ref``s
to parameters, request bodies and responses, ``nullable``, boolean ``exclusiveMinimum``,
``readOnly``/``writeOnly``, a recursive schema) and a 3.1 one (type arrays, a component
schema with its own ``$defs`` and ``#/$defs/...`` references, recursion through them)."""

from __future__ import annotations

from typing import Any


def zoo_30() -> dict[str, Any]:
    animal_json = {"application/json": {"schema": {"$ref": "#/components/schemas/Animal"}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Zoo API", "version": "2.0", "description": "Animals of the zoo."},
        "servers": [
            {"url": "https://zoo.example/{version}", "variables": {"version": {"default": "v1"}}}
        ],
        "paths": {
            "/animals/{animalId}": {
                "parameters": [{"$ref": "#/components/parameters/AnimalId"}],
                "get": {
                    "operationId": "getAnimal",
                    "summary": "One animal",
                    "tags": ["animals"],
                    "parameters": [
                        {
                            "name": "fields",
                            "in": "query",
                            "style": "form",
                            "explode": False,
                            "schema": {"type": "array", "items": {"type": "string"}},
                        }
                    ],
                    "responses": {
                        "200": {"$ref": "#/components/responses/AnimalResponse"},
                        "404": {"description": "no such animal"},
                    },
                },
                "put": {
                    "operationId": "update animal!",
                    "description": "Replace an animal.",
                    "parameters": [{"name": "name", "in": "query", "schema": {"type": "string"}}],
                    "requestBody": {"$ref": "#/components/requestBodies/AnimalBody"},
                    "responses": {"200": {"description": "ok", "content": animal_json}},
                },
            },
            "/keepers/{id}/shifts": {
                "post": {
                    "tags": ["keepers"],
                    "parameters": [
                        {
                            "name": "id",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "string"},
                        },
                        {"name": "id", "in": "header", "schema": {"type": "string"}},
                        {"name": "Authorization", "in": "header", "schema": {"type": "string"}},
                    ],
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "array",
                                    "items": {"type": "string", "format": "date"},
                                }
                            }
                        },
                    },
                    "responses": {"204": {"description": "planned"}},
                }
            },
        },
        "components": {
            "schemas": {
                "Animal": {
                    "type": "object",
                    "required": ["id", "name"],
                    "properties": {
                        "id": {"type": "integer", "readOnly": True},
                        "name": {"type": "string"},
                        "nickname": {"type": "string", "nullable": True},
                        "weight": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
                        "kind": {"$ref": "#/components/schemas/Kind"},
                        "parent": {"$ref": "#/components/schemas/Animal"},
                        "secret": {"type": "string", "writeOnly": True},
                    },
                    "x-internal": True,
                    "discriminator": {"propertyName": "kind"},
                },
                "Kind": {
                    "type": "string",
                    "enum": ["cat", "dog"],
                    "nullable": True,
                    "example": "cat",
                },
            },
            "parameters": {
                "AnimalId": {
                    "name": "animalId",
                    "in": "path",
                    "required": True,
                    "description": "The animal's id",
                    "schema": {"type": "integer"},
                }
            },
            "requestBodies": {"AnimalBody": {"required": True, "content": animal_json}},
            "responses": {"AnimalResponse": {"description": "the animal", "content": animal_json}},
        },
    }


def forest_31() -> dict[str, Any]:
    tree = {"application/json": {"schema": {"$ref": "#/components/schemas/Tree"}}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "Forest", "version": "0.1"},
        "paths": {
            "/trees": {
                "post": {
                    "operationId": "plant",
                    "requestBody": {"required": True, "content": tree},
                    "responses": {"201": {"description": "planted", "content": tree}},
                }
            },
            "/trees/{treeId}/leaves": {
                "get": {
                    "parameters": [
                        {
                            "name": "treeId",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "string", "format": "uuid"},
                        },
                        {"name": "color", "in": "query", "schema": {"type": ["string", "null"]}},
                    ],
                    "responses": {
                        "200": {
                            "description": "leaves",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "array",
                                        "items": {"$ref": "#/components/schemas/Tree/$defs/Leaf"},
                                    }
                                }
                            },
                        }
                    },
                }
            },
        },
        "components": {
            "schemas": {
                "Tree": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {
                        "name": {"type": "string", "examples": ["oak"]},
                        "root": {"$ref": "#/$defs/Node", "description": "The root node"},
                        "leaves": {"type": "array", "items": {"$ref": "#/$defs/Leaf"}},
                    },
                    "$defs": {
                        "Node": {
                            "type": "object",
                            "properties": {
                                "value": {"type": ["integer", "null"]},
                                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                            },
                        },
                        "Leaf": {
                            "type": "object",
                            "properties": {"color": {"type": "string"}},
                        },
                    },
                }
            }
        },
    }
