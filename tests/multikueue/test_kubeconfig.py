"""Worker kubeconfigs are held to Kueue v0.19.2's ``InsecureKubeConfig`` rules
(``pkg/controller/admissionchecks/multikueue/multikueuecluster.go`` L958-1041): one test per rule, the generated
kubeconfig accepted, a bad one refused before apply, a worker ``server`` Kueue would refuse is a config error."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest
import yaml

from batchplane.errors import ConfigValidationError
from batchplane.multikueue.kubeconfig import InsecureKubeConfigError, is_valid_hostname, kubeconfig_problems
from batchplane.multikueue.worker import worker_kubeconfig
from batchplane.offline import read_stack_file
from batchplane.stack import load_stack
from tests.conftest import template_path

CA = base64.b64encode(b"-----BEGIN CERTIFICATE-----\n").decode()


def good() -> dict[str, Any]:
    return worker_kubeconfig("us-east4", "https://34.1.2.3", CA, "eyJhbGciOi.recorded")


def changed(user: dict[str, Any] | None = None, cluster: dict[str, Any] | None = None) -> dict[str, Any]:
    config = copy.deepcopy(good())
    config["users"][0]["user"].update(user or {})
    config["clusters"][0]["cluster"].update(cluster or {})
    return config


def test_the_generated_kubeconfig_passes_every_rule_as_text_and_as_a_mapping() -> None:
    assert kubeconfig_problems(good()) == []
    assert kubeconfig_problems(yaml.safe_dump(good())) == []


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (changed(user={"tokenFile": "/var/run/secrets/token"}), "tokenFile is not allowed"),
        (
            changed(cluster={"insecure-skip-tls-verify": True}),
            "insecure TLS verification is not allowed for cluster us-east4",
        ),
        (
            changed(cluster={"certificate-authority": "/etc/ca.crt"}),
            "certificate-authority file paths are not allowed, use certificate-authority-data for cluster us-east4",
        ),
        (changed(cluster={"server": ""}), "server URL is required for cluster us-east4"),
        (changed(user={"tokenFile": "/t"}), "bearerTokenFile is not allowed"),
        (changed(cluster={"server": "https://not_a_host.example"}), "untrusted server endpoint"),
        (changed(user={"username": "admin", "password": "x"}), "basic auth is not allowed"),
        (
            changed(
                user={
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": "gke-gcloud-auth-plugin",
                    }
                }
            ),
            "exec plugins are not allowed",
        ),
        (changed(user={"auth-provider": {"name": "gcp"}}), "auth providers are not allowed"),
    ],
    ids=[
        "token-file",
        "insecure-tls",
        "ca-file-path",
        "no-server",
        "bearer-token-file",
        "untrusted-host",
        "basic-auth",
        "exec-plugin",
        "auth-provider",
    ],
)
def test_each_kueue_insecure_kubeconfig_rule_is_reported_with_kueues_message(
    config: dict[str, Any], message: str
) -> None:
    assert message in kubeconfig_problems(config)


def test_a_kubeconfig_that_is_not_yaml_or_has_no_current_context_is_reported() -> None:
    assert kubeconfig_problems("{")[0].startswith("failed to parse kubeconfig")
    no_context = {**good(), "current-context": "elsewhere"}
    assert kubeconfig_problems(no_context) == [
        "current-context must name a context whose cluster is in the kubeconfig"
    ]


def test_every_broken_rule_is_listed_at_once_in_kueues_order() -> None:
    config = changed(
        user={"exec": {"command": "x"}, "auth-provider": {"name": "oidc"}},
        cluster={"insecure-skip-tls-verify": True},
    )
    assert kubeconfig_problems(config) == [
        "insecure TLS verification is not allowed for cluster us-east4",
        "exec plugins are not allowed",
        "auth providers are not allowed",
    ]


@pytest.mark.parametrize(
    ("server", "valid"),
    [
        ("https://34.1.2.3", True),
        ("https://34.1.2.3:443", True),
        ("https://API.Example.com:6443", True),  # lowercased first, as Kueue does
        ("https://[2001:db8::1]:443", True),
        ("https://connectgateway.googleapis.com/v1/projects/1/locations/global/gkeMemberships/w", True),
        ("https://under_score.example", False),
        ("https://", False),
        ("api.example.com:6443", False),  # no scheme: Go's url.Parse gives no host
    ],
)
def test_the_server_host_must_be_an_ip_or_a_dns_subdomain(server: str, valid: bool) -> None:
    assert is_valid_hostname(server) is valid


def test_generating_a_kubeconfig_kueue_would_refuse_raises_before_apply() -> None:
    with pytest.raises(InsecureKubeConfigError, match="untrusted server endpoint") as caught:
        worker_kubeconfig("w", "https://bad_host", CA, "t")
    assert caught.value.problems == ["untrusted server endpoint"]


def test_a_declared_worker_server_kueue_would_refuse_is_a_config_error_at_its_key() -> None:
    config = copy.deepcopy(read_stack_file(template_path("gke-multiregion-dws")))
    config["batchplane:multiKueue"]["workers"][2]["server"] = "https://gw_1.example"
    with pytest.raises(ConfigValidationError) as caught:
        load_stack(config, "t")
    [issue] = [str(i) for i in caught.value.issues if "server" in str(i)]
    assert (
        issue.startswith("batchplane:multiKueue.workers[2].server") and "untrusted server endpoint" in issue
    )
