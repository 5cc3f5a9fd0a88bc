"""Stack files read as ``pulumi up`` reads them, so that any bytes end in a mapping or in clean
``ConfigErrors``; Pulumi.yaml's project config; keys written back.

Pulumi reads stack files with Go's ``gopkg.in/yaml.v3`` (YAML 1.2 core schema) and hands structured
values to the program as JSON. PyYAML's parser is the base here, with:
- scalars resolved as yaml.v3's ``resolve.go`` resolves them: only ``true``/``false`` (three
  spellings) are booleans, so ``yes``/``no``/``on``/``off`` are strings; ``0o17``, ``0x1F``, ``1e3``
  are numbers; ``1:20`` is a string;
- duplicate keys refused as yaml.v3's ``decoder.mapping`` refuses them (by the key's text, so ``1``
  and ``"1"`` collide, and two ``<<`` merge keys in one mapping are an error), plus keys that only
  collide through an alias (yaml.v3 would silently keep the last);
- each ``config:`` value passed through what Pulumi does to it (``sdk/go/common/resource/config``
  ``object.go``: scalars become strings, objects JSON), so ``200.0`` reaches the program as ``200``
  (Go's ``encoding/json`` writes an integral float64 without a fraction; Python's ``json`` reads an int);
- values whose reading differs between YAML readers (YAML 1.1 boolean keys, base-60 numbers,
  unquoted timestamps, numbers beyond 64 bits) refused with what Pulumi would read;
- Pulumi's loader (pulumi/pulumi ``sdk/go/common/workspace/loaders.go``): a bare ``config:`` key
  is the project's (``platform`` is ``gpu-infra:platform``; beside its namespaced twin it is an
  error, as Pulumi would keep one at random);
- yaml.v3's reader: UTF-8, or UTF-16 after its byte-order mark (``readerc.go``), and only
  ``%YAML 1.1`` documents (``parserc.go``: "found incompatible YAML document");
- the limits a config file needs and YAML does not have: a bad byte named by its offset, one
  document, a mapping at the root with the keys Pulumi's stack settings file defines,
  nesting depth and the size after alias expansion bounded *while composing*, before any value is
  expanded (a "billion laughs" file is refused in milliseconds);
- every YAML error is ``<file>:<line>:<column>: <problem>``.

Sources: go-yaml/yaml v3 ``resolve.go`` (``resolveMapList``, ``yamlStyleFloat``, ``parseTimestamp``)
and ``decode.go`` (``mapping``: "mapping key %#v already defined at line %d"; ``isMerge``); YAML 1.2.2
section 10.3.2 core schema tag resolution (https://yaml.org/spec/1.2.2/); pulumi/pulumi
``sdk/go/common/resource/config/object.go`` (``unmarshalObject``, ``MarshalString``); Pulumi stack
settings file attributes (https://www.pulumi.com/docs/iac/concepts/projects/stack-settings-file/).

``reader.read_stack_file`` is the entry point; ``loader`` holds the YAML loader and its limits,
``goyaml`` the yaml.v3 scalar rules, ``project`` Pulumi.yaml's project config and ``edit`` the
line-preserving writer (``with_pool_keys``).
"""
