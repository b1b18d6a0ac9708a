"""treadle.fileio: one file API over local disks, S3 and every fsspec filesystem."""

__version__ = "0.1.0"
