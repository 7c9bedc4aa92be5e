"""capmodel.report"""
