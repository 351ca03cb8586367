"""The Pulumi components shared by every platform, and :class:`~batchplane.components.batch_cluster.BatchCluster`,
which wires one cluster. Importing this package imports no Pulumi; its modules do.
"""
