"""Platform writer and reader: the paper's machines, Batsim's host order, and bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from batsim_classifier_scheduler.errors import PlatformError
from batsim_classifier_scheduler.platforms import platform_xml, read_platform, write_platform

from tests.helpers import REPO, SHARED, shared  # noqa: E402,F401
#: The committed platforms and their compute host counts.
MACHINES = {"ctc_sp2": 338, "hpc2n": 240, "kth_sp2": 100, "sdsc_blue": 1152, "sdsc_sp2": 128,
            "kit_fh2": 24048, "metacentrum2_zegox": 576, "small-16": 16}


def batsim_resource_names(transcript: Path) -> list[str]:
    """The compute resource names, in id order, of a recorded SIMULATION_BEGINS."""
    first = json.loads(transcript.read_text().splitlines()[0])
    resources = first["msg"]["events"][0]["data"]["compute_resources"]
    return [r["name"] for r in sorted(resources, key=lambda r: r["id"])]


@pytest.mark.parametrize("name, hosts", MACHINES.items())
def test_committed_platforms_parse_with_one_master(name, hosts):
    platform = read_platform(REPO / "platforms" / f"{name}.xml")
    assert platform.nb_compute_hosts == platform.nb_hosts == hosts
    assert platform.master_name == "master_host0"
    assert platform.master_name not in platform.host_names
    assert len(set(platform.host_names)) == hosts


@pytest.mark.parametrize("name, hosts", MACHINES.items())
def test_committed_platforms_are_what_the_writer_makes(name, hosts):
    committed = (REPO / "platforms" / f"{name}.xml").read_text()
    assert committed == platform_xml(hosts, name=name), \
        f"regenerate with: python -m batsim_classifier_scheduler platform --nb-res {hosts} --name {name} -o platforms/{name}.xml"


def test_committed_platforms_are_small():
    assert all((REPO / "platforms" / f"{name}.xml").stat().st_size < 2000 for name in MACHINES)


def test_written_platform_round_trips(tmp_path):
    platform = read_platform(write_platform(tmp_path / "p.xml", 12, name="test"))
    assert platform.nb_compute_hosts == 12
    assert platform.host_names == tuple(sorted(f"a{i}" for i in range(12)))
    assert platform.host_names[:4] == ("a0", "a1", "a10", "a11")


def test_the_reference_platform_matches_ours():
    reference = read_platform(shared("reference-schedules/KTH-SP2/platform.xml"))
    ours = read_platform(REPO / "platforms" / "kth_sp2.xml")
    assert reference == ours


def test_host_order_is_batsims_on_a_cluster():
    platform = read_platform(shared("batsim-transcripts/inputs/cluster512.xml"))
    names = batsim_resource_names(shared("batsim-transcripts/easy-250/trace.jsonl"))
    assert len(names) == 128  # Batsim ran with --mmax-workload: the first 128 hosts
    assert list(platform.host_names[:128]) == names


def test_host_order_is_batsims_on_plain_hosts():
    platform = read_platform(shared("batsim-transcripts/inputs/small_platform.xml"))
    assert platform.master_name == "master_host"
    assert list(platform.host_names) == batsim_resource_names(
        shared("batsim-transcripts/kill-resubmit/trace.jsonl"))


def xml(tmp_path, body: str) -> Path:
    path = tmp_path / "platform.xml"
    path.write_text(f'<?xml version="1.0"?>\n<platform version="4.1"><zone id="z" routing="Full">'
                    f"{body}</zone></platform>")
    return path


def test_radicals_roles_and_storage(tmp_path):
    platform = read_platform(xml(tmp_path, """
        <cluster id="c" prefix="n-" suffix=".x" radical="0-2,7" speed="1Gf" bw="1GBps" lat="0us"/>
        <host id="boss" speed="1Gf"><prop id="role" value="master"/></host>
        <host id="disk" speed="1Gf"><prop id="role" value="storage"/></host>"""))
    assert platform.master_name == "boss"
    assert platform.host_names == ("n-0.x", "n-1.x", "n-2.x", "n-7.x")


@pytest.mark.parametrize("body, message", [
    ('<host id="a" speed="1Gf"/>', "no master host"),
    ('<host id="master_host" speed="1Gf"/>', "no compute host"),
    ('<host id="m1"><prop id="role" value="master"/></host><host id="m2"><prop id="role" value="master"/></host>'
     '<host id="a"/>', "several master hosts: m1, m2"),
    ('<cluster id="c" prefix="a" radical="0-x"/><host id="master_host"/>', "cluster 'c' has a bad radical '0-x'"),
    ('<host id="a"/><host id="a"/><host id="master_host"/>', "host 'a' is defined twice"),
    ('<host speed="1Gf"/>', "<host> without 'id'"),
])
def test_bad_platforms_name_the_problem(tmp_path, body, message):
    with pytest.raises(PlatformError, match=r"platform\.xml: " + message):
        read_platform(xml(tmp_path, body))


def test_invalid_xml_and_missing_file(tmp_path):
    broken = tmp_path / "broken.xml"
    broken.write_text("<platform><zone>\n</platform>")
    with pytest.raises(PlatformError, match=r"broken\.xml:2:\d+: invalid XML"):
        read_platform(broken)
    with pytest.raises(PlatformError, match=r"absent\.xml: no such file"):
        read_platform(tmp_path / "absent.xml")


def test_writer_rejects_bad_sizes():
    with pytest.raises(PlatformError, match="positive integer"):
        platform_xml(0)
