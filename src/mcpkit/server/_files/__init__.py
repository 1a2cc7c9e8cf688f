"""Files served as resources (``FileResource``, ``DirectoryResource``): paths kept inside
their root, bounded reads, and the watch that tells subscribers of changes."""
