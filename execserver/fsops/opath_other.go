//go:build !linux

package fsops

const oPath = 0
