"""Validates Kubernetes manifests offline, as an API server with strict field validation would check
their shapes: each custom resource against its CRD's `openAPIV3Schema` (deploy/kubernetes/schemas),
every object as closed (an unknown field is an error, as `kubectl apply --validate=strict` makes it);
each core object, and the core objects a SandboxTemplate embeds (its pod template, its network policy's
rules, its volume claim templates), against Kubernetes' own schemas in their strict form as
kubernetes-validate ships them. Prints one JSON line per check: {"file", "kind", "name", "check", "errors"}.

Not checked: CEL rules (`x-kubernetes-validations`), defaults, admission webhooks, and what only a
controller knows (that the Secret, the template or the pool exist).

usage: deploy_manifests.py SCHEMAS_DIR KUBERNETES_VERSION FILE…
"""

import copy
import json
import pathlib
import sys

import jsonschema
import yaml
from kubernetes_validate import utils as kv
from referencing import Registry, Resource

SCHEMAS, VERSION, FILES = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3:]


def strict(schema):
    """A CRD's structural schema as JSON Schema that refuses unknown fields."""
    schema = copy.deepcopy(schema)

    def close(node):
        if isinstance(node, dict):
            if (node.get("type") == "object" and "properties" in node and "additionalProperties" not in node
                    and not node.get("x-kubernetes-preserve-unknown-fields")):
                node["additionalProperties"] = False
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)

    close(schema)
    return schema


def crds():
    """{(apiVersion, kind): strict schema} for every version of every CRD."""
    found = {}
    for path in sorted(SCHEMAS.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            found[(f"{group}/{version['name']}", kind)] = strict(version["schema"]["openAPIV3Schema"])
    return found


def errors_of(validator, value):
    return sorted(
        f"{'.'.join(str(p) for p in error.absolute_path) or '(root)'}: {error.message}"
        for error in validator.iter_errors(value)
    )


def core_errors(document):
    """Errors of a core object against kubernetes-validate's strict schema for its kind."""
    schema_dir = f"v{VERSION}-local-strict"
    api = document["apiVersion"].split("/")
    group = api[0].split(".")[0] if len(api) == 2 else None
    name = f"{document['kind'].lower()}-{group}-{api[-1]}" if group else f"{document['kind'].lower()}-{api[-1]}"
    schema = kv.schema_contents(f"kubernetes-json-schema/{schema_dir}/{name}.json", VERSION)
    definitions = kv.schema_contents(f"kubernetes-json-schema/{schema_dir}/_definitions.json", VERSION)
    registry = Resource.from_contents(definitions) @ (Resource.from_contents(schema) @ Registry())
    return errors_of(jsonschema.Draft202012Validator(schema, registry=registry), document)


def embedded(document):
    """The core objects a SandboxTemplate holds, each as the object Kubernetes will make of it."""
    spec, name = document.get("spec", {}), document.get("metadata", {}).get("name", "x")
    if "podTemplate" in spec:
        yield "podTemplate as a PodTemplate", {
            "apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": name}, "template": spec["podTemplate"]}
    if "networkPolicy" in spec:
        policy = {"podSelector": {}, "policyTypes": ["Ingress", "Egress"], **spec["networkPolicy"]}
        yield "networkPolicy as a NetworkPolicy", {
            "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": name}, "spec": policy}
    for claim in spec.get("volumeClaimTemplates", []):
        yield f"volumeClaimTemplates[{claim.get('metadata', {}).get('name')}] as a PersistentVolumeClaim", {
            "apiVersion": "v1", "kind": "PersistentVolumeClaim", **claim}


def report(file, document, check, errors):
    print(json.dumps({"file": file, "kind": document.get("kind"), "name": document.get("metadata", {}).get("name"),
                      "check": check, "errors": errors}), flush=True)


def main():
    custom = crds()
    meta = None
    for file in FILES:
        for document in yaml.safe_load_all(pathlib.Path(file).read_text()):
            if not document:
                continue
            key = (document.get("apiVersion"), document.get("kind"))
            if key in custom:
                validator = jsonschema.Draft7Validator(custom[key], format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
                report(file, document, "CRD schema", errors_of(validator, document))
                # The CRD leaves metadata open (`type: object`): it is core ObjectMeta, checked as a ConfigMap's.
                meta = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": document.get("metadata", {})}
                report(file, document, "metadata as ObjectMeta", core_errors(meta))
                for check, inner in embedded(document):
                    report(file, document, check, core_errors(inner))
            else:
                try:
                    report(file, document, "core schema", core_errors(document))
                except (FileNotFoundError, kv.SchemaNotFoundError, KeyError) as error:
                    report(file, document, "core schema", [f"(root): no schema for {key}: {error}"])


main()
