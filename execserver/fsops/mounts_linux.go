package fsops

// mountPoints lists the mount points of this process's namespace, from
// mountinfo (a mountinfo file; "" means /proc/self/mountinfo).
func mountPoints(mountinfo string) ([]string, error) {
	if mountinfo == "" {
		mountinfo = "/proc/self/mountinfo"
	}
	return readMountPoints(mountinfo)
}
