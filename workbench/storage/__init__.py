"""Storage step of Algorithm 2: export the dataset from the storage host, mount it on compute.

NFS (``mount -t nfs``) when the compute kernel has an NFS client (``nfs`` in
/proc/filesystems); otherwise sshfs over the data link (read-only, key auth, strict host keys).
The mount lives in the compute sshd's mount namespace, so it is made, checked (/proc/mounts)
and removed only over SSH.

Public API (stable)::

    has_nfs_client(conn) -> bool
    MountRecord(method: "nfs"|"sshfs", host, source, mountpoint, options, setup_s, teardown_s)
    mount_dataset(compute, storage, export_path, *, storage_address, run_id, method="auto",
                  identity_file=None, known_hosts=None, ssh_port=22, ssh_user="root",
                  mountpoint=None, nfs_port=2049) -> MountRecord  # mnt: /tmp/nimo-mnt-<run>.<host>
    unmount_dataset(compute, record) -> float          # seconds; verified gone
    dataset_mounted(...same args as mount_dataset...) -> ctx manager yielding MountRecord

    NfsExport(host, address, port, export_path, pseudo, workdir, pid, start_s)  # .url()
    start_nfs_server(storage, export_path, *, bind_address, run_id, port=2049) -> NfsExport
    stop_nfs_server(storage, export) ; nfs_exported(...) -> ctx manager yielding NfsExport
    ganesha_config(export_path, *, bind_address, port, workdir) -> str   # pure

``identity_file`` / ``known_hosts`` are paths ON THE COMPUTE HOST used by sshfs to reach the
storage host's sshd at ``storage_address`` (its data-path address).
"""

from workbench.storage.mount import (
    MountRecord,
    dataset_mounted,
    has_nfs_client,
    mount_dataset,
    unmount_dataset,
)
from workbench.storage.nfs import (
    NfsExport,
    ganesha_config,
    nfs_exported,
    start_nfs_server,
    stop_nfs_server,
)

__all__ = [
    "MountRecord",
    "NfsExport",
    "ganesha_config",
    "nfs_exported",
    "start_nfs_server",
    "stop_nfs_server",
    "dataset_mounted",
    "has_nfs_client",
    "mount_dataset",
    "unmount_dataset",
]
