"""Dataset export/mount over the data path (sshfs here: this kernel has no NFS client)."""

from __future__ import annotations

import hashlib
import os
import uuid

import pytest

from workbench.emulation import LinkEnd, NetworkSpec, network_applied
from workbench.errors import EmulationError
from workbench.storage import dataset_mounted, has_nfs_client, mount_dataset, unmount_dataset

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def dataset(lab):
    d = lab.export_dir / "ds"
    d.mkdir(parents=True, exist_ok=True)
    (d / "blob.bin").write_bytes(os.urandom(8 << 20))
    return d


def _mount_kw(lab, run_id: str) -> dict:
    return dict(storage_address=lab.host("storage1").data_address, run_id=run_id,
                identity_file=str(lab.key_file), known_hosts=str(lab.known_hosts))


def test_sshfs_mount_is_readonly_exact_and_removed(lab, compute, storage, dataset,
                                                   assert_clean):
    want = hashlib.md5((dataset / "blob.bin").read_bytes()).hexdigest()
    with dataset_mounted(compute, storage, str(lab.export_dir), **_mount_kw(lab, "ro")) as rec:
        assert rec.method == ("nfs" if has_nfs_client(compute) else "sshfs")
        mounts = compute.run(["cat", "/proc/mounts"]).stdout
        assert f" {rec.mountpoint} fuse.sshfs ro," in mounts
        got = compute.run(["md5sum", f"{rec.mountpoint}/ds/blob.bin"]).stdout.split()[0]
        assert got == want
        assert compute.run(["touch", f"{rec.mountpoint}/ds/new"], check=False).exit_code != 0
    print(f"sshfs mount {rec.setup_s:.3f} s, unmount {rec.teardown_s:.3f} s")
    assert rec.mountpoint not in compute.run(["cat", "/proc/mounts"]).stdout
    assert compute.run(["test", "-e", rec.mountpoint], check=False).exit_code != 0
    assert_clean(compute)


def test_mount_goes_over_the_shaped_data_path(lab, compute, storage, dataset, assert_clean):
    c, s = lab.host("compute1"), lab.host("storage1")
    ends = [LinkEnd(compute, c.data_iface, s.data_address),
            LinkEnd(storage, s.data_iface, c.data_address)]
    with network_applied(ends, NetworkSpec(rate_mbit=20), run_id="shp"), dataset_mounted(
        compute, storage, str(lab.export_dir), **_mount_kw(lab, "shp")
    ) as rec:
        res = compute.run(["dd", f"if={rec.mountpoint}/ds/blob.bin", "of=/dev/null", "bs=1M"],
                          timeout=60)
    mbit = 8 * 8 * 1.048576 / res.duration_s
    print(f"8 MiB over sshfs at tbf 20 Mbit/s: {mbit:.1f} Mbit/s")
    assert 13 <= mbit <= 20.5
    assert_clean(compute)


def test_missing_export_and_metacharacters_are_refused(lab, compute, storage, assert_clean):
    marker = f"/tmp/nimo-pwned-{uuid.uuid4().hex}"
    with pytest.raises(EmulationError, match="does not exist"):
        mount_dataset(compute, storage, f"/tmp/x; touch {marker}", **_mount_kw(lab, "bad"))
    assert not os.path.exists(marker)
    assert_clean(compute)


def test_unmount_is_idempotent(lab, compute, storage, dataset):
    rec = mount_dataset(compute, storage, str(lab.export_dir), **_mount_kw(lab, "idem"))
    unmount_dataset(compute, rec)
    unmount_dataset(compute, rec)
    assert rec.mountpoint not in compute.run(["cat", "/proc/mounts"]).stdout


def test_nfs_ganesha_export_serves_the_dataset_over_the_data_path(lab, compute, storage,
                                                                  dataset, assert_clean):
    from workbench.storage import nfs_exported

    s = lab.host("storage1")
    want = hashlib.md5((dataset / "blob.bin").read_bytes()).hexdigest()
    with nfs_exported(storage, str(lab.export_dir), bind_address=s.data_address,
                      run_id="nfs", port=2049) as export:
        # this kernel has no NFS client: read with libnfs (real NFSv4 on the wire)
        listing = compute.run(["nfs-ls", export.url("ds")], timeout=30).stdout
        assert "blob.bin" in listing
        data = compute.run(["sh", "-c", 'nfs-cat "$1" | md5sum', "x",
                            export.url("ds/blob.bin")], timeout=60).stdout.split()[0]
        assert data == want
        assert export.pid > 0
    print(f"nfs-ganesha start {export.start_s:.3f} s")
    assert "2049" not in storage.run(["ss", "-Htln"]).stdout
    assert_clean(storage, s.data_iface)


def test_nfs_method_needs_a_kernel_client(lab, compute, storage, dataset):
    if has_nfs_client(compute):
        pytest.skip("this kernel has an NFS client")
    with pytest.raises(EmulationError, match="no NFS client"):
        mount_dataset(compute, storage, str(lab.export_dir), method="nfs",
                      **_mount_kw(lab, "nfs2"))
