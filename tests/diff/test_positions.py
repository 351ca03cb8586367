"""Key positions of a stack file: every config key path → its line and column, for annotations on the line."""

from __future__ import annotations

import pytest

from batchplane.errors import ConfigLoadError
from batchplane.yamlfile import issue_position, read_positions_text

TEXT = """\
# comment
config:
  batchplane:environment: dev
  batchplane:kueue:
    clusterQueues:
      - name: a
        cohortName: c
        resourceGroups:
          - coveredResources: [cpu]
            flavors:
              - name: f
                resources: [{name: cpu, nominalQuota: 4}]
  gcp:project: p
"""


def test_each_config_key_and_list_item_has_its_line_and_column() -> None:
    pos = read_positions_text(TEXT, "t.yaml")
    assert pos["batchplane:environment"] == (3, 3)
    assert pos["batchplane:kueue.clusterQueues"] == (5, 5)
    assert pos["batchplane:kueue.clusterQueues[0]"] == (6, 9)
    assert pos["batchplane:kueue.clusterQueues[0].cohortName"] == (7, 9)
    assert pos[
        "batchplane:kueue.clusterQueues[0].resourceGroups[0].flavors[0].resources[0].nominalQuota"
    ] == (12, 41)
    assert pos["gcp:project"] == (13, 3)


def test_an_issue_path_maps_to_its_key_or_the_nearest_key_the_file_spells_out() -> None:
    pos = read_positions_text(TEXT, "t.yaml")
    assert issue_position(pos, "batchplane:kueue.clusterQueues[0].cohortName") == (7, 9)
    assert issue_position(pos, "batchplane:kueue.clusterQueues[0].preemption.reclaimWithinCohort") == (6, 9)
    assert issue_position(pos, 'batchplane:kueue.clusterQueues[0] (generated ClusterQueue "a")') == (6, 9)
    assert issue_position(pos, "batchplane:webhook") == (None, None)


def test_the_positions_reader_keeps_the_readers_rules() -> None:
    with pytest.raises(ConfigLoadError, match="duplicate key"):
        read_positions_text("config:\n  a: 1\n  a: 2\n", "t.yaml")


def test_a_value_reached_through_an_alias_is_placed_at_its_anchor() -> None:
    pos = read_positions_text("config:\n  x: &q {cpu: 1}\n  y: *q\n", "t.yaml")
    assert pos["x.cpu"] == (2, 10)
    assert pos["y.cpu"] == (2, 10)
